//! Zero-copy TCP/IP in the timed host, after Kurmann, Rauch and Stricker:
//! driver-level fragmentation, speculative defragmentation with its
//! cleanup, zero-copy OS embeddings (page remapping, fbufs), the match CAM
//! and injected interference.
//!
//! ```text
//!  send: stack (virtual MTU = one page of TCP data) ─▶ driver cuts 3 IPv4
//!        fragments, 2 descriptors each ─▶ TX DMA (6 descriptor fetches) ─▶ wire
//!  recv: wire ─▶ [CAM: fast list | regular list] ─▶ RX DMA into pre-loaded
//!        descriptors (headers guessed) ─▶ one interrupt per train (or timeout)
//!        ─▶ driver checks the train ─▶ hit: rebuilt 4 KB packet to the stack
//!                                   └▶ miss: stop RX DMA (back pressure),
//!                                      re-initialise the list, restart it;
//!                                      then copy each frame out of the
//!                                      speculative buffers to the stack
//!  read: whole aligned pages remapped (or handed over as fbufs), the rest copied
//! ```
//!
//! One engine on both paths: the receive hooks ([`RxOffload`]) speculate
//! and answer admission requests, the send hooks ([`TxOffload`]) fragment
//! and throttle, and the socket hook moves whole pages without a copy.
//! smoltcp still carries the bytes (it reassembles the fragments of a miss
//! itself); this file decides what the CPU pays and when. Units: cycles of
//! the host's clock, bytes. Left out: the TX side's descriptor-ring slots
//! (a page takes one slot of `nic.tx_ring`, its six descriptor fetches are
//! charged on the bus), cache effects of remapping, TLB shoot-downs on
//! other cores.

use std::collections::BTreeMap;

use serde::Serialize;

use super::cam::{self, MatchCam};
use super::frag::{self, Check, Guess};
use super::{Action, DriverBatch, OffloadEvent, RxCx, RxDone, RxOffload, Setup, SocketCall, TxOffload};
use crate::bus::{Bus, BusOp};
use crate::engine::rng::component_rng;
use crate::engine::{Dur, Priority, Time};
use crate::host::cpu::{Class, Job, Layer, Path};
use crate::host::timing::{AdmissionMode, Timing, ZeroCopyConfig, ZeroCopyOs};

/// Counters of a host's zero-copy machinery.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ZeroCopyStats {
    /// Page-sized packets the driver cut into fragments.
    pub tx_fragmented: u64,
    /// Fragments it made.
    pub tx_fragments: u64,
    /// Speculations that succeeded: trains whose payloads all landed where
    /// guessed, handed to the stack as one packet without a copy.
    pub spec_hits: u64,
    /// Speculations that failed (each costs a list re-initialisation and a cleanup copy).
    pub spec_misses: u64,
    /// Cleanup step 1a: receive DMA stopped (once per failed speculation).
    pub rx_stops: u64,
    /// Cleanup step 1b: speculative descriptor list re-initialised.
    pub list_reinits: u64,
    /// Cleanup step 1c: receive DMA restarted after the re-initialisation.
    pub rx_restarts: u64,
    /// Time the receive DMA stood stopped for cleanups, ns.
    pub rx_stopped_ns: u64,
    /// Cleanup step 2: frames copied out of the speculative buffers into
    /// fresh socket buffers and passed to the regular stack.
    pub cleanup_frames: u64,
    /// Rebuilt pages TCP checksummed in software (`zero_copy.rx_checksum`).
    pub rx_checksummed: u64,
    /// Of the misses, trains still incomplete when the timeout expired.
    pub spec_timeouts: u64,
    /// Small frames that fitted the first header buffer and were passed on without breaking the speculation.
    pub spec_bypassed: u64,
    /// Frames the match CAM sent to the regular list.
    pub cam_regular: u64,
    /// Bytes copied out of the speculative buffers after misses (whole frames).
    pub cleanup_bytes: u64,
    /// Packets delivered to the stack without a defragmenting copy (= hits).
    pub zero_copy_packets: u64,
    /// Bytes of fragments copied by IP reassembly (the defragmenting copy).
    pub defrag_copy_bytes: u64,
    /// Pages the socket layer moved without a copy (remap or fbufs).
    pub zero_copy_pages: u64,
    /// Socket calls of a zero-copy OS that copied some bytes instead
    /// (buffer not page aligned, not whole pages, or no page-sized segments).
    pub copy_fallbacks: u64,
    /// Interfering frames injected at this host.
    pub interference_frames: u64,
    /// Frames received larger than the first header buffer (data).
    pub rx_large: u64,
    /// Frames received that fit the first header buffer (control: ACKs, handshakes, small messages).
    pub rx_small: u64,
    /// Admission control: Fast_Req frames sent (sender).
    pub fast_requests: u64,
    /// Fast_Ack frames received (sender: transfers admitted).
    pub fast_admitted: u64,
    /// Fast_NAck frames received (sender: transfers refused for now).
    pub fast_refused: u64,
    /// Fast_Ack frames sent (receiver).
    pub fast_acks_sent: u64,
    /// Fast_NAck frames sent (receiver: another fast transfer was in progress).
    pub fast_nacks_sent: u64,
    /// Sum of request round trips (Fast_Req sent to answer handled), ns.
    pub admission_rtt_ns_total: u64,
    /// Page trains held back because their sender was not admitted (throttling).
    pub throttled: u64,
    /// Fast_NAck frames received that answered no request: the receiver
    /// gave its slot to another sender (revoking ours if we were fast).
    pub fast_revoked: u64,
    /// Peer SYNs whose MSS option the fragmenting driver raised to its own
    /// page-sized MSS (an unprepared peer advertises 1460).
    pub mss_raised: u64,
}

/// EtherType of the admission control frames: 0x88B6, the second IEEE 802
/// "local experimental" EtherType (0x88B5 carries the VIA frames).
pub const ADMISSION_ETHERTYPE: u16 = 0x88B6;

/// Kind byte of a control frame (right after the Ethernet header).
const FAST_REQ: u8 = 1;
const FAST_ACK: u8 = 2;
const FAST_NACK: u8 = 3;

/// A sender's admission state towards one peer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Admission {
    /// Fast_Req sent at the time given, no answer yet.
    Pending(Time),
    /// Admitted: page trains go at full speed.
    Fast,
    /// Refused: ask again at the time given.
    Refused(Time),
}

/// A sender's view of one peer.
#[derive(Debug, Clone, Copy)]
struct Peer {
    state: Admission,
    /// Earliest time the next throttled page train may go.
    next_train: Time,
}

/// A host's zero-copy state.
#[derive(Debug)]
pub struct ZeroCopy {
    cfg: ZeroCopyConfig,
    /// IP MTU of the physical link.
    link_mtu: usize,
    guess: Guess,
    /// The MSS the virtual interface advertises (one page of data plus TCP options).
    own_mss: u16,
    /// The host's MAC address (source of its control frames).
    mac: [u8; 6],
    /// Identification of the next datagram the driver fragments.
    ident: u16,
    /// Misses whose cleanup is still running: RX DMA stays stopped.
    stopped: u32,
    /// When the receive DMA was stopped (while `stopped > 0`).
    stopped_at: Option<Time>,
    /// The fbuf pool is mapped.
    fbufs_ready: bool,
    /// Received page-sized TCP segments (a rebuilt train, or a datagram IP
    /// reassembled) not yet read: only these can be remapped or handed
    /// over as fbufs; data that came in smaller segments is copied.
    rx_pages: u64,
    cam: Option<MatchCam>,
    /// Sender: admission state per peer MAC address.
    peers: BTreeMap<[u8; 6], Peer>,
    /// Receiver: the admitted fast sender and when it was last heard from.
    fast: Option<([u8; 6], Time)>,
    /// A throttle wake-up of the TX path is booked for this time.
    kick_at: Option<Time>,
    stats: ZeroCopyStats,
}

/// How a socket call moves its data under a zero-copy OS.
pub struct SocketMove {
    /// Cycles of the part still copied.
    pub copy: u64,
    /// Bytes still copied (they cross the memory system twice).
    pub copied: u64,
    /// Remap or fbuf work for the pages moved without a copy.
    pub pieces: Vec<(Layer, u64)>,
}

/// What the driver makes of the frames of one batch.
enum Unit {
    /// A frame for the normal path.
    Normal(Vec<u8>),
    /// A train that landed as guessed.
    Hit(Vec<Vec<u8>>),
    /// A train that broke the guess (or timed out).
    Miss(Vec<Vec<u8>>),
}

impl ZeroCopy {
    /// The state for a host (its `zero_copy` settings, link MTU, TCP header
    /// size and MAC); `None` when every zero-copy switch is off (the host
    /// runs the standard stack untouched).
    pub fn from_host(host: &Setup) -> Option<ZeroCopy> {
        let (cfg, link_mtu, tcp_header, mac) = (&host.timing.zero_copy, host.link_mtu, host.tcp_header, host.mac);
        let active = cfg.fragment
            || cfg.speculate
            || cfg.os != ZeroCopyOs::Copy
            || cfg.interference.frames > 0
            || cfg.admission != AdmissionMode::Off;
        if !active {
            return None;
        }
        let guess = Guess::new(link_mtu, tcp_header, cfg.page.0 as usize);
        let cam = (cfg.cam.ways() > 0).then(|| {
            let mut c = MatchCam::new(cfg.cam.ways());
            for e in cam::fragment_entries(mac, cfg.cam.ways(), guess.fragment_payload, guess.max_fragments()) {
                c.program(e);
            }
            c
        });
        Some(ZeroCopy {
            cfg: cfg.clone(),
            link_mtu,
            guess,
            own_mss: (cfg.page.0 as usize + tcp_header - 20).min(usize::from(u16::MAX)) as u16,
            mac,
            ident: 1,
            stopped: 0,
            stopped_at: None,
            fbufs_ready: false,
            rx_pages: 0,
            cam,
            peers: BTreeMap::new(),
            fast: None,
            kick_at: None,
            stats: ZeroCopyStats::default(),
        })
    }

    /// The IP MTU the stack should see: one page of TCP data per packet
    /// when the driver fragments (None: the link's).
    pub fn virtual_mtu(cfg: &ZeroCopyConfig, tcp_header: usize) -> Option<usize> {
        cfg.fragment.then(|| cfg.page.0 as usize + frag::IP_HEADER + tcp_header)
    }

    /// A datagram of `ip_payload` bytes reached the stack: one more page to
    /// read without a copy if it carries a whole page of TCP data.
    fn credit_datagram(&mut self, ip_payload: usize) {
        if ip_payload >= self.cfg.page.0 as usize + self.guess.tcp_header {
            self.rx_pages += 1;
        }
    }

    /// Fragments the driver cuts `frame` into (None: sent as is).
    fn fragments_of(&self, frame: &[u8]) -> Option<usize> {
        if !self.cfg.fragment || frame.len() <= self.link_mtu + frag::ETH_HEADER {
            return None;
        }
        let ip = frame.len() - frag::ETH_HEADER - frag::IP_HEADER;
        Some(ip.div_ceil((self.link_mtu - frag::IP_HEADER) & !7))
    }
}

impl ZeroCopy {
    /// Receive work of a frame on the normal path: the stack's pieces, and
    /// the defragmenting copy for a fragment on a zero-copy host (IP
    /// reassembly copies the fragments into one buffer).
    fn normal_pieces(&mut self, cx: &RxCx, frame: &[u8], core: usize) -> Vec<(Layer, u64)> {
        if let Some(total) = frag::last_fragment_total(frame) {
            self.credit_datagram(total);
        }
        let cost = (cx.rx_cost)(frame, core);
        let mut pieces = cost.pieces;
        if frag::is_fragment(frame) {
            pieces.push((Layer::Copy, cx.timing.copy_cycles(cost.ip_payload, false)));
            self.stats.defrag_copy_bytes += cost.ip_payload;
        }
        pieces
    }

    /// Sort the frames of a batch into units. Frames of an incomplete train
    /// go back to the ring (the driver waits for the rest) while the train
    /// is younger than the timeout or more frames wait in the NIC.
    fn plan(&mut self, cx: &RxCx, batch: &mut DriverBatch) -> Vec<Unit> {
        let frames = std::mem::take(&mut batch.frames);
        let mut units = Vec::new();
        if !self.cfg.speculate {
            return frames.into_iter().map(|(_, f, _)| Unit::Normal(f)).collect();
        }
        let mut train: Vec<(Time, Vec<u8>)> = Vec::new();
        for (at, f, _) in frames {
            if self.cam.as_ref().is_some_and(|c| !c.matches(&f)) {
                self.stats.cam_regular += 1;
                units.push(Unit::Normal(f));
                continue;
            }
            if train.is_empty() && !frag::is_fragment(&f) && f.len() <= self.guess.first_header() {
                // It fits the first header buffer: nothing landed in the page.
                self.stats.spec_bypassed += 1;
                units.push(Unit::Normal(f));
                continue;
            }
            train.push((at, f));
            let refs: Vec<&[u8]> = train.iter().map(|(_, f)| f.as_slice()).collect();
            match frag::check_train(&refs, &self.guess) {
                Check::Partial => {}
                Check::Complete => units.push(Unit::Hit(train.drain(..).map(|(_, f)| f).collect())),
                Check::Mismatch => units.push(Unit::Miss(train.drain(..).map(|(_, f)| f).collect())),
            }
        }
        if let Some((first, _)) = train.first() {
            // Frames still in the NIC (its FIFO, or held on the link by back
            // pressure) may be the rest of a train: the DMA was stopped for a
            // cleanup or the ring ran out of descriptors, not the sender.
            if cx.now >= *first + self.cfg.timeout.dur() && !cx.nic_holding {
                self.stats.spec_timeouts += 1;
                units.push(Unit::Miss(train.into_iter().map(|(_, f)| f).collect()));
            } else {
                for (at, f) in train.into_iter().rev() {
                    batch.ring.push_front((at, f, 1));
                }
            }
        }
        units
    }

    /// The driver handles control frame `f` (after its turnaround).
    fn on_control(&mut self, cx: &mut RxCx, f: Vec<u8>) {
        let from = mac_at(&f, 6);
        let mac = self.mac;
        match f[14] {
            FAST_REQ => {
                let (now, holding) = (cx.now, cx.nic_holding);
                let idle = self.cfg.admission_idle.dur();
                // Frames still in the NIC (or held on the link by our back
                // pressure) mean the fast sender is not silent: we are
                // holding it back.
                let busy = self.fast.is_some_and(|(p, seen)| p != from && (holding || now < seen + idle));
                // Only one stream is fast: a slot handed to a new sender is
                // taken from the silent one (a Fast_NAck revokes it).
                let mut revoke = None;
                let kind = if busy || !self.cfg.speculate {
                    self.stats.fast_nacks_sent += 1;
                    FAST_NACK
                } else {
                    revoke = self.fast.map(|(p, _)| p).filter(|p| *p != from);
                    self.fast = Some((from, now));
                    self.stats.fast_acks_sent += 1;
                    FAST_ACK
                };
                if let Some(old) = revoke {
                    self.stats.fast_nacks_sent += 1;
                    cx.actions.push(Action::Wire(control_frame(old, mac, FAST_NACK)));
                }
                cx.actions.push(Action::Wire(control_frame(from, mac, kind)));
            }
            kind @ (FAST_ACK | FAST_NACK) => {
                let retry = self.cfg.admission_retry.dur();
                let now = cx.now;
                if let Some(p) = self.peers.get_mut(&from) {
                    match p.state {
                        Admission::Pending(asked) => {
                            self.stats.admission_rtt_ns_total += now.since(asked).0 / 1000;
                            if kind == FAST_ACK {
                                self.stats.fast_admitted += 1;
                                p.state = Admission::Fast;
                            } else {
                                self.stats.fast_refused += 1;
                                p.state = Admission::Refused(now + retry);
                            }
                        }
                        // The receiver gave the fast slot to another sender
                        // (while we were fast, or after it had refused us).
                        Admission::Fast | Admission::Refused(_) if kind == FAST_NACK => {
                            self.stats.fast_revoked += 1;
                            if p.state == Admission::Fast {
                                p.state = Admission::Refused(now + retry);
                            }
                        }
                        _ => {}
                    }
                }
                cx.actions.push(Action::KickTx);
            }
            _ => {}
        }
    }
}

impl RxOffload for ZeroCopy {
    /// Schedule the interfering frames: small UDP broadcasts (64 bytes on
    /// the wire before the CRC is left out: 60 bytes) at times drawn
    /// uniformly from the window.
    fn start(&mut self, cx: &mut RxCx, seed: u64, host: &str) {
        use rand::Rng;
        let cfg = &self.cfg.interference;
        if cfg.frames == 0 {
            return;
        }
        let (n, over) = (cfg.frames, cfg.over.0);
        let mut rng = component_rng(seed, &format!("hosts.{host}/interference"));
        for i in 0..n {
            let at = Time(rng.gen_range(0..over));
            cx.actions.push(Action::Timer(at, Priority::WIRE, OffloadEvent::Interfere(i)));
        }
    }

    /// A control frame goes to the driver (handled after the turnaround);
    /// any other refreshes the receiver's view of its fast sender.
    fn arrive(&mut self, cx: &mut RxCx, mut frame: Vec<u8>) -> Option<Vec<u8>> {
        if self.cfg.fragment && frag::raise_syn_mss(&mut frame, self.own_mss) {
            self.stats.mss_raised += 1;
        }
        if self.cfg.admission == AdmissionMode::Off && !is_admission(&frame) {
            return Some(frame);
        }
        if is_admission(&frame) {
            let at = cx.now + self.cfg.admission_turnaround.dur();
            cx.actions.push(Action::Timer(at, Priority::DEVICE, OffloadEvent::Control(frame)));
            return None;
        }
        if let Some((peer, seen)) = self.fast.as_mut() {
            if frame.len() >= 12 && frame[6..12] == peer[..] {
                *seen = cx.now;
            }
        }
        Some(frame)
    }

    fn on_event(&mut self, cx: &mut RxCx, ev: OffloadEvent) {
        match ev {
            OffloadEvent::Interfere(i) => {
                self.stats.interference_frames += 1;
                cx.actions.push(Action::Arrive(interference_frame(i)));
            }
            OffloadEvent::Control(frame) => self.on_control(cx, frame),
            // A throttle wake-up: try the TX path again.
            OffloadEvent::Kick => {
                if self.kick_at == Some(cx.now) {
                    self.kick_at = None;
                }
                cx.actions.push(Action::KickTx);
            }
            // A cleanup re-initialised the list: RX DMA restarts once every
            // pending cleanup has done so.
            OffloadEvent::Resume => {
                self.stopped -= 1;
                self.stats.rx_restarts += 1;
                if self.stopped == 0 {
                    if let Some(at) = self.stopped_at.take() {
                        self.stats.rx_stopped_ns += cx.now.since(at).0 / 1000;
                    }
                }
                cx.actions.push(Action::KickRx);
            }
            OffloadEvent::CoreDone | OffloadEvent::Flush => {}
        }
    }

    /// Speculation: trains that landed as guessed go up as one packet
    /// without a copy; a broken guess stops the receive DMA for the
    /// cleanup; frames of an incomplete train wait on the ring.
    fn driver_batch(&mut self, cx: &mut RxCx, batch: &mut DriverBatch) {
        let core = batch.core;
        let units = self.plan(cx, batch);
        for unit in units {
            let frames: &[Vec<u8>] = match &unit {
                Unit::Normal(f) => std::slice::from_ref(f),
                Unit::Hit(train) | Unit::Miss(train) => train,
            };
            let large = frames.iter().filter(|f| f.len() > self.guess.first_header()).count() as u64;
            self.stats.rx_large += large;
            self.stats.rx_small += frames.len() as u64 - large;
            match unit {
                Unit::Normal(f) => {
                    let pieces = self.normal_pieces(cx, &f, core);
                    batch.deliver(pieces, f, 1);
                }
                Unit::Hit(train) => {
                    self.stats.spec_hits += 1;
                    self.stats.zero_copy_packets += 1;
                    let (check, sum) = (self.cfg.spec_check, self.cfg.rx_checksum);
                    if sum {
                        self.stats.rx_checksummed += 1;
                    }
                    let refs: Vec<&[u8]> = train.iter().map(Vec::as_slice).collect();
                    let packet = frag::rebuild(&refs);
                    let cost = (cx.rx_cost)(&packet, core);
                    self.credit_datagram(cost.ip_payload as usize);
                    let mut pieces = cost.pieces;
                    let t = cx.timing;
                    let driver = t.cycles_on(core, t.costs.driver_rx);
                    pieces.push((Layer::Driver, driver * (train.len() as u64 - 1)));
                    pieces.push((Layer::Driver, t.cycles_on(core, check)));
                    if sum {
                        // TCP reads the whole segment the NIC wrote (cold) to sum it.
                        pieces.push((Layer::Checksum, t.checksum_cycles_on(core, cost.ip_payload)));
                    }
                    batch.deliver(pieces, packet, 1);
                }
                Unit::Miss(train) => {
                    // The study's cleanup (section 5.3): (1) stop reception,
                    // re-initialise the descriptor list and restart it; (2)
                    // copy the scattered fragments out of the zero-copy
                    // buffers and pass them to the regular IP stack. The
                    // restart does not wait for the copies.
                    self.stats.spec_misses += 1;
                    self.stats.rx_stops += 1;
                    self.stats.list_reinits += 1;
                    if self.stopped == 0 {
                        self.stopped_at = Some(cx.now);
                    }
                    self.stopped += 1;
                    let t = cx.timing;
                    let (check, reinit) = (self.cfg.spec_check, self.cfg.list_reinit);
                    let pieces = vec![(Layer::Driver, t.cycles_on(core, check) + t.cycles_on(core, reinit))];
                    let job = Job::new(Class::Softirq, pieces, RxDone::Resume);
                    batch.jobs.push(job.for_msg(batch.msg).on(Path::Receive));
                    for f in train {
                        self.stats.cleanup_frames += 1;
                        self.stats.cleanup_bytes += f.len() as u64;
                        let mut pieces = vec![(Layer::Copy, cx.timing.copy_cycles(f.len() as u64, false))];
                        pieces.extend(self.normal_pieces(cx, &f, core));
                        batch.deliver(pieces, f, 1);
                    }
                }
            }
        }
    }

    fn rx_stopped(&self) -> bool {
        self.stopped > 0
    }

    /// While speculating: one interrupt per train (as many frames as a page
    /// takes) or the timeout after the first.
    fn moderation(&self) -> Option<(u32, Dur)> {
        self.cfg.speculate.then(|| (self.guess.max_fragments() as u32, self.cfg.timeout.dur()))
    }

    fn tx(&mut self) -> Option<&mut dyn TxOffload> {
        Some(self)
    }

    fn report(&self, into: &mut super::OffloadReport) {
        into.zero_copy = Some(self.stats.clone());
    }
}

impl TxOffload for ZeroCopy {
    /// One fragment header and two descriptors per fragment the driver cuts.
    fn tx_pieces(&self, timing: &Timing, frame: &[u8], core: usize) -> Option<(Layer, u64)> {
        let n = self.fragments_of(frame)? as u64;
        Some((Layer::IpFrag, n * timing.cycles_on(core, self.cfg.fragment_tx)))
    }

    fn wire_frames(&self, frame: &[u8], _tso_mss: Option<u16>) -> usize {
        self.fragments_of(frame).unwrap_or(1)
    }

    /// Admission control on the send path: may the NIC start the head TX
    /// frame now? Sends Fast_Req when due; holds a page train of a sender not
    /// admitted until its throttle interval has passed (and books a wake-up).
    fn gate(&mut self, cx: &mut RxCx, head: &[u8]) -> bool {
        let (now, mac) = (cx.now, self.mac);
        let mode = self.cfg.admission;
        if mode == AdmissionMode::Off || head.len() < 14 || head[0] & 1 == 1 {
            return true;
        }
        let dst = mac_at(head, 0);
        let train = self.fragments_of(head).is_some();
        let mut ask = false;
        let peer = match self.peers.get_mut(&dst) {
            Some(p) => p,
            None if mode == AdmissionMode::Explicit || train => {
                ask = true;
                self.peers.entry(dst).or_insert(Peer { state: Admission::Pending(now), next_train: now })
            }
            None => return true,
        };
        if let Admission::Refused(retry) = peer.state {
            if now >= retry {
                ask = true;
                peer.state = Admission::Pending(now);
            }
        }
        let go = if !train || peer.state == Admission::Fast {
            true
        } else if now >= peer.next_train {
            peer.next_train = now + self.cfg.admission_throttle.dur();
            true
        } else {
            self.stats.throttled += 1;
            let at = peer.next_train;
            if self.kick_at.is_none_or(|k| k > at || k < now) {
                self.kick_at = Some(at);
                cx.actions.push(Action::Timer(at, Priority::DEVICE, OffloadEvent::Kick));
            }
            false
        };
        if ask {
            self.stats.fast_requests += 1;
            cx.actions.push(Action::Wire(control_frame(dst, mac, FAST_REQ)));
        }
        go
    }

    /// TX DMA of a fragmented page started at `now` whose first descriptor
    /// and data move by `dma_done`: five more descriptor fetches and one more
    /// header buffer per further fragment cross the bus.
    fn tx_dma(&mut self, bus: &mut Bus, descriptor: u64, now: Time, frame: &[u8], dma_done: Time) -> Time {
        let Some(n) = self.fragments_of(frame) else { return dma_done };
        let mut at = now;
        for _ in 1..2 * n {
            at = bus.transfer(at, BusOp::DeviceRead, descriptor);
        }
        for _ in 1..n {
            at = bus.transfer(at, BusOp::DeviceRead, (frag::ETH_HEADER + frag::IP_HEADER) as u64);
        }
        dma_done.max(at)
    }

    /// The frames the NIC puts on the wire for `bytes` (fragments, or the frame itself).
    fn segment(&mut self, bytes: Vec<u8>, _tso_mss: Option<u16>) -> Vec<Vec<u8>> {
        if self.fragments_of(&bytes).is_none() {
            return vec![bytes];
        }
        match frag::fragment(&bytes, self.link_mtu, self.ident) {
            Some(frags) => {
                self.ident = self.ident.wrapping_add(1).max(1);
                self.stats.tx_fragmented += 1;
                self.stats.tx_fragments += frags.len() as u64;
                frags
            }
            None => vec![bytes],
        }
    }

    /// What a socket call moving `bytes` costs at the socket layer when a
    /// zero-copy OS takes part (`None`: the standard copy).
    fn socket_move(
        &mut self,
        timing: &Timing,
        call: SocketCall,
        bytes: u64,
        hot: bool,
        core: usize,
    ) -> Option<SocketMove> {
        if self.cfg.os == ZeroCopyOs::Copy || call == SocketCall::Other || bytes == 0 {
            return None;
        }
        let page = self.cfg.page.0;
        // Pages only exist as whole packets when the driver fragments
        // page-sized segments, and only an aligned buffer can take them.
        let mut pages = if self.cfg.fragment && self.cfg.aligned { bytes / page } else { 0 };
        if call == SocketCall::Read {
            // The study's condition 3: the data must sit in a zero-copy
            // socket buffer, i.e. have arrived as a page-sized segment.
            pages = pages.min(self.rx_pages);
            self.rx_pages -= pages;
        }
        let copied = bytes - pages * page;
        if copied > 0 {
            self.stats.copy_fallbacks += 1;
        }
        self.stats.zero_copy_pages += pages;
        let mut pieces = Vec::new();
        if pages > 0 {
            let cost = |c| timing.cycles_on(core, c);
            match self.cfg.os {
                ZeroCopyOs::Remap => {
                    let (per, cow) = (self.cfg.remap_page, self.cfg.cow_setup);
                    pieces.push((Layer::Socket, pages * cost(per) + cost(cow)));
                }
                ZeroCopyOs::Fbufs => {
                    let (per, setup) = (self.cfg.fbuf_page, self.cfg.fbuf_setup);
                    let first = !std::mem::replace(&mut self.fbufs_ready, true);
                    pieces.push((Layer::Socket, pages * cost(per) + if first { cost(setup) } else { 0 }));
                }
                ZeroCopyOs::Copy => unreachable!("checked above"),
            }
        }
        Some(SocketMove { copy: timing.copy_cycles(copied, hot), copied, pieces })
    }
}

/// A 60-byte Ethernet broadcast carrying a UDP datagram from 10.255.255.254
/// port 9 to the broadcast address port 9 (discard): any stack drops it.
fn interference_frame(i: u64) -> Vec<u8> {
    use smoltcp::wire::{EthernetAddress, EthernetFrame, EthernetProtocol, IpProtocol, Ipv4Address, Ipv4Packet};
    use smoltcp::wire::{Ipv4Repr, UdpPacket, UdpRepr};
    let src = Ipv4Address::new(10, 255, 255, 254);
    let dst = Ipv4Address::BROADCAST;
    let data = (i as u32).to_be_bytes();
    let udp = UdpRepr { src_port: 9, dst_port: 9 };
    let ip = Ipv4Repr {
        src_addr: src,
        dst_addr: dst,
        next_header: IpProtocol::Udp,
        payload_len: 8 + data.len(),
        hop_limit: 64,
    };
    let mut f = vec![0u8; 60];
    let mut eth = EthernetFrame::new_unchecked(&mut f[..]);
    eth.set_dst_addr(EthernetAddress::BROADCAST);
    eth.set_src_addr(EthernetAddress([0x02, 0xee, 0, 0, 0, 1]));
    eth.set_ethertype(EthernetProtocol::Ipv4);
    let caps = smoltcp::phy::ChecksumCapabilities::default();
    let mut p = Ipv4Packet::new_unchecked(&mut f[14..]);
    ip.emit(&mut p, &caps);
    let mut u = UdpPacket::new_unchecked(&mut f[34..34 + 8 + data.len()]);
    udp.emit(&mut u, &src.into(), &dst.into(), data.len(), |b| b.copy_from_slice(&data), &caps);
    f
}

/// A 60-byte admission control frame of `kind` from `src` to `dst`.
fn control_frame(dst: [u8; 6], src: [u8; 6], kind: u8) -> Vec<u8> {
    let mut f = vec![0u8; 60];
    f[..6].copy_from_slice(&dst);
    f[6..12].copy_from_slice(&src);
    f[12..14].copy_from_slice(&ADMISSION_ETHERTYPE.to_be_bytes());
    f[14] = kind;
    f
}

/// Whether `frame` is an admission control frame.
pub fn is_admission(frame: &[u8]) -> bool {
    frame.len() >= 15 && frame[12..14] == ADMISSION_ETHERTYPE.to_be_bytes()
}

fn mac_at(frame: &[u8], at: usize) -> [u8; 6] {
    frame[at..at + 6].try_into().expect("six bytes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interference_frames_are_valid_udp() {
        use smoltcp::wire::{Ipv4Packet, UdpPacket};
        let f = interference_frame(7);
        assert_eq!(f.len(), 60);
        let ip = Ipv4Packet::new_checked(&f[14..]).unwrap();
        assert!(ip.verify_checksum());
        let udp = UdpPacket::new_checked(ip.payload()).unwrap();
        assert!(udp.verify_checksum(&ip.src_addr().into(), &ip.dst_addr().into()));
        assert_eq!(udp.payload(), &[0, 0, 0, 7]);
    }

    #[test]
    fn control_frames_carry_their_kind_under_the_experimental_ethertype() {
        let f = control_frame([2, 0, 0, 0, 0, 2], [2, 0, 0, 0, 0, 1], FAST_NACK);
        assert_eq!(f.len(), 60);
        assert_eq!(&f[12..14], &[0x88, 0xb6]);
        assert_eq!(f[14], 3);
        assert_eq!(mac_at(&f, 6), [2, 0, 0, 0, 0, 1]);
        assert!(is_admission(&f));
        assert!(!is_admission(&interference_frame(1)));
        // The VIA EtherType is not ours.
        let mut via = f.clone();
        via[13] = 0xb5;
        assert!(!is_admission(&via));
    }
}
