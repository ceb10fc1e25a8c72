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
//! smoltcp still carries the bytes (it reassembles the fragments of a miss
//! itself); this file decides what the CPU pays and when. Units: cycles of
//! the host's clock, bytes. Left out: the TX side's descriptor-ring slots
//! (a page takes one slot of `nic.tx_ring`, its six descriptor fetches are
//! charged on the bus), cache effects of remapping, TLB shoot-downs on
//! other cores.

use std::collections::BTreeMap;

use serde::Serialize;

use super::timed::{shape, Next, Timed};
use super::{Event, Sim};
use crate::bus::BusOp;
use crate::engine::rng::component_rng;
use crate::engine::{Dur, Priority, Time};
use crate::host::cpu::{Class, Job, Layer, Path};
use crate::host::timing::{AdmissionMode, ZeroCopyConfig, ZeroCopyOs};
use crate::nic::cam::{self, MatchCam};
use crate::nic::frag::{self, Check, Guess};
use crate::workload::Op;

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
pub(super) struct ZeroCopy {
    cfg: ZeroCopyConfig,
    /// IP MTU of the physical link.
    link_mtu: usize,
    guess: Guess,
    /// The MSS the virtual interface advertises (one page of data plus TCP options).
    own_mss: u16,
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
    pub(super) stats: ZeroCopyStats,
}

/// How a socket call moves its data under a zero-copy OS.
pub(super) struct SocketMove {
    /// Cycles of the part still copied.
    pub(super) copy: u64,
    /// Bytes still copied (they cross the memory system twice).
    pub(super) copied: u64,
    /// Remap or fbuf work for the pages moved without a copy.
    pub(super) pieces: Vec<(Layer, u64)>,
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
    /// The state for a host with `cfg` on a link of IP MTU `link_mtu`, TCP
    /// headers of `tcp_header` bytes and MAC `mac`; `None` when every
    /// zero-copy switch is off (the host runs the standard stack untouched).
    pub(super) fn new(cfg: &ZeroCopyConfig, link_mtu: usize, tcp_header: usize, mac: [u8; 6]) -> Option<ZeroCopy> {
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
    pub(super) fn virtual_mtu(cfg: &ZeroCopyConfig, tcp_header: usize) -> Option<usize> {
        cfg.fragment.then(|| cfg.page.0 as usize + frag::IP_HEADER + tcp_header)
    }

    /// Whether RX DMA is stopped for a cleanup.
    pub(super) fn rx_stopped(&self) -> bool {
        self.stopped > 0
    }

    /// Interrupt moderation while speculating: one interrupt per train
    /// (as many frames as a page takes) or the timeout after the first.
    pub(super) fn moderation(&self) -> Option<(u32, Dur)> {
        self.cfg.speculate.then(|| (self.guess.max_fragments() as u32, self.cfg.timeout.dur()))
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

impl Timed {
    /// Extra send-path work of a frame the driver will fragment: one
    /// fragment header and two descriptors per fragment.
    pub(super) fn zc_tx_pieces(&self, frame: &[u8], core: usize) -> Option<(Layer, u64)> {
        let z = self.zc.as_ref()?;
        let n = z.fragments_of(frame)? as u64;
        Some((Layer::IpFrag, n * self.timing.cycles_on(core, z.cfg.fragment_tx)))
    }

    /// Frames `frame` becomes on the wire (1 unless the driver fragments it).
    pub(super) fn zc_wire_frames(&self, frame: &[u8]) -> usize {
        self.zc.as_ref().and_then(|z| z.fragments_of(frame)).unwrap_or(1)
    }

    /// TX DMA of a fragmented page started at `now` whose first descriptor
    /// and data move by `dma_done`: five more descriptor fetches and one more
    /// header buffer per further fragment cross the bus.
    pub(super) fn zc_tx_dma(&mut self, now: Time, frame: &[u8], dma_done: Time) -> Time {
        let Some(n) = self.zc.as_ref().and_then(|z| z.fragments_of(frame)) else { return dma_done };
        let desc = self.timing.nic.descriptor.0;
        let mut at = now;
        for _ in 1..2 * n {
            at = self.bus.transfer(at, BusOp::DeviceRead, desc);
        }
        for _ in 1..n {
            at = self.bus.transfer(at, BusOp::DeviceRead, (frag::ETH_HEADER + frag::IP_HEADER) as u64);
        }
        dma_done.max(at)
    }

    /// The frames the NIC puts on the wire for `bytes` (fragments, or the frame itself).
    pub(super) fn zc_fragment(&mut self, bytes: Vec<u8>) -> Vec<Vec<u8>> {
        let Some(z) = self.zc.as_mut() else { return vec![bytes] };
        if z.fragments_of(&bytes).is_none() {
            return vec![bytes];
        }
        let ident = z.ident;
        match frag::fragment(&bytes, z.link_mtu, ident) {
            Some(frags) => {
                z.ident = z.ident.wrapping_add(1).max(1);
                z.stats.tx_fragmented += 1;
                z.stats.tx_fragments += frags.len() as u64;
                frags
            }
            None => vec![bytes],
        }
    }

    /// What a socket call moving `op.bytes()` costs at the socket layer
    /// when a zero-copy OS takes part (`None`: the standard copy).
    pub(super) fn zc_socket_move(&mut self, op: &Op, hot: bool, core: usize) -> Option<SocketMove> {
        let z = self.zc.as_mut()?;
        if z.cfg.os == ZeroCopyOs::Copy || !matches!(op, Op::Read { .. } | Op::Write { .. }) || op.bytes() == 0 {
            return None;
        }
        let bytes = op.bytes();
        let page = z.cfg.page.0;
        // Pages only exist as whole packets when the driver fragments
        // page-sized segments, and only an aligned buffer can take them.
        let mut pages = if z.cfg.fragment && z.cfg.aligned { bytes / page } else { 0 };
        if matches!(op, Op::Read { .. }) {
            // The study's condition 3: the data must sit in a zero-copy
            // socket buffer, i.e. have arrived as a page-sized segment.
            pages = pages.min(z.rx_pages);
            z.rx_pages -= pages;
        }
        let copied = bytes - pages * page;
        if copied > 0 {
            z.stats.copy_fallbacks += 1;
        }
        z.stats.zero_copy_pages += pages;
        let mut pieces = Vec::new();
        if pages > 0 {
            let cost = |c| self.timing.cycles_on(core, c);
            let z = self.zc.as_mut().expect("checked");
            match z.cfg.os {
                ZeroCopyOs::Remap => {
                    let (per, cow) = (z.cfg.remap_page, z.cfg.cow_setup);
                    pieces.push((Layer::Socket, pages * cost(per) + cost(cow)));
                }
                ZeroCopyOs::Fbufs => {
                    let (per, setup) = (z.cfg.fbuf_page, z.cfg.fbuf_setup);
                    let first = !std::mem::replace(&mut z.fbufs_ready, true);
                    pieces.push((Layer::Socket, pages * cost(per) + if first { cost(setup) } else { 0 }));
                }
                ZeroCopyOs::Copy => unreachable!("checked above"),
            }
        }
        Some(SocketMove { copy: self.timing.copy_cycles(copied, hot), copied, pieces })
    }

    /// Receive work of a frame on the normal path: the stack's pieces, and
    /// the defragmenting copy for a fragment on a zero-copy host (IP
    /// reassembly copies the fragments into one buffer).
    fn zc_normal_pieces(&mut self, frame: &[u8], core: usize) -> Vec<(Layer, u64)> {
        let s = shape(frame);
        if let (Some(total), Some(z)) = (frag::last_fragment_total(frame), self.zc.as_mut()) {
            z.credit_datagram(total);
        }
        let mut pieces = super::timed::rx_pieces(&self.timing, s, core);
        if frag::is_fragment(frame) {
            let copy = self.timing.copy_cycles(s.payload, false);
            pieces.push((Layer::Copy, copy));
            if let Some(z) = self.zc.as_mut() {
                z.stats.defrag_copy_bytes += s.payload;
            }
        }
        pieces
    }

    /// Sort the frames of a batch into units. Frames of an incomplete train
    /// go back to the ring (the driver waits for the rest) while the train
    /// is younger than the timeout or more frames wait in the NIC.
    fn zc_plan(&mut self, frames: Vec<(Time, Vec<u8>)>, now: Time) -> Vec<Unit> {
        // Frames still in the NIC (its FIFO, or held on the link by back
        // pressure) may be the rest of a train: the DMA was stopped for a
        // cleanup or the ring ran out of descriptors, not the sender.
        let waiting = !self.nic.rx_fifo.is_empty() || !self.nic.rx_held.is_empty();
        let z = self.zc.as_mut().expect("a zero-copy host");
        let mut units = Vec::new();
        if !z.cfg.speculate {
            return frames.into_iter().map(|(_, f)| Unit::Normal(f)).collect();
        }
        let mut train: Vec<(Time, Vec<u8>)> = Vec::new();
        for (at, f) in frames {
            if z.cam.as_ref().is_some_and(|c| !c.matches(&f)) {
                z.stats.cam_regular += 1;
                units.push(Unit::Normal(f));
                continue;
            }
            if train.is_empty() && !frag::is_fragment(&f) && f.len() <= z.guess.first_header() {
                // It fits the first header buffer: nothing landed in the page.
                z.stats.spec_bypassed += 1;
                units.push(Unit::Normal(f));
                continue;
            }
            train.push((at, f));
            let refs: Vec<&[u8]> = train.iter().map(|(_, f)| f.as_slice()).collect();
            match frag::check_train(&refs, &z.guess) {
                Check::Partial => {}
                Check::Complete => units.push(Unit::Hit(train.drain(..).map(|(_, f)| f).collect())),
                Check::Mismatch => units.push(Unit::Miss(train.drain(..).map(|(_, f)| f).collect())),
            }
        }
        if let Some((first, _)) = train.first() {
            if now >= *first + z.cfg.timeout.dur() && !waiting {
                z.stats.spec_timeouts += 1;
                units.push(Unit::Miss(train.into_iter().map(|(_, f)| f).collect()));
            } else {
                for item in train.into_iter().rev() {
                    self.nic_rx_done_front(item);
                }
            }
        }
        units
    }
}

impl Sim {
    /// The driver's receive work on a zero-copy host: `frames` taken off the
    /// ring become jobs in `jobs`; returns how many frames it kept off the
    /// ring for good (the rest wait for their train).
    pub(super) fn zc_driver_batch(
        &mut self,
        h: usize,
        frames: Vec<(Time, Vec<u8>)>,
        now: Time,
        core: usize,
        msg: Option<u64>,
        jobs: &mut Vec<Job<Next>>,
    ) -> usize {
        let taken = frames.len();
        let t = self.timed(h);
        let before = t.nic_rx_done_len();
        let units = t.zc_plan(frames, now);
        let kept = t.nic_rx_done_len() - before;
        for unit in units {
            let t = self.timed(h);
            let z = t.zc.as_mut().expect("zero-copy host");
            let frames: &[Vec<u8>] = match &unit {
                Unit::Normal(f) => std::slice::from_ref(f),
                Unit::Hit(train) | Unit::Miss(train) => train,
            };
            let large = frames.iter().filter(|f| f.len() > z.guess.first_header()).count() as u64;
            z.stats.rx_large += large;
            z.stats.rx_small += frames.len() as u64 - large;
            match unit {
                Unit::Normal(f) => {
                    let pieces = t.zc_normal_pieces(&f, core);
                    jobs.push(Job::new(Class::Softirq, pieces, Next::RxDeliver(f, 1)).for_msg(msg).on(Path::Receive));
                }
                Unit::Hit(train) => {
                    let z = t.zc.as_mut().expect("zero-copy host");
                    z.stats.spec_hits += 1;
                    z.stats.zero_copy_packets += 1;
                    let check = z.cfg.spec_check;
                    let sum = z.cfg.rx_checksum;
                    if sum {
                        z.stats.rx_checksummed += 1;
                    }
                    let refs: Vec<&[u8]> = train.iter().map(Vec::as_slice).collect();
                    let packet = frag::rebuild(&refs);
                    let s = shape(&packet);
                    let z = t.zc.as_mut().expect("zero-copy host");
                    z.credit_datagram(s.payload as usize);
                    let mut pieces = super::timed::rx_pieces(&t.timing, s, core);
                    let driver = t.timing.cycles_on(core, t.timing.costs.driver_rx);
                    pieces.push((Layer::Driver, driver * (train.len() as u64 - 1)));
                    pieces.push((Layer::Driver, t.timing.cycles_on(core, check)));
                    if sum {
                        // TCP reads the whole segment the NIC wrote (cold) to sum it.
                        pieces.push((Layer::Checksum, t.timing.checksum_cycles_on(core, s.payload)));
                    }
                    jobs.push(
                        Job::new(Class::Softirq, pieces, Next::RxDeliver(packet, 1)).for_msg(msg).on(Path::Receive),
                    );
                }
                Unit::Miss(train) => {
                    // The study's cleanup (section 5.3): (1) stop reception,
                    // re-initialise the descriptor list and restart it; (2)
                    // copy the scattered fragments out of the zero-copy
                    // buffers and pass them to the regular IP stack. The
                    // restart does not wait for the copies.
                    let z = t.zc.as_mut().expect("zero-copy host");
                    z.stats.spec_misses += 1;
                    z.stats.rx_stops += 1;
                    z.stats.list_reinits += 1;
                    if z.stopped == 0 {
                        z.stopped_at = Some(now);
                    }
                    z.stopped += 1;
                    let (check, reinit) = (z.cfg.spec_check, z.cfg.list_reinit);
                    let pieces =
                        vec![(Layer::Driver, t.timing.cycles_on(core, check) + t.timing.cycles_on(core, reinit))];
                    jobs.push(Job::new(Class::Softirq, pieces, Next::SpecResume).for_msg(msg).on(Path::Receive));
                    for f in train {
                        let t = self.timed(h);
                        let z = t.zc.as_mut().expect("zero-copy host");
                        z.stats.cleanup_frames += 1;
                        z.stats.cleanup_bytes += f.len() as u64;
                        let mut pieces = vec![(Layer::Copy, t.timing.copy_cycles(f.len() as u64, false))];
                        pieces.extend(t.zc_normal_pieces(&f, core));
                        jobs.push(
                            Job::new(Class::Softirq, pieces, Next::RxDeliver(f, 1)).for_msg(msg).on(Path::Receive),
                        );
                    }
                }
            }
        }
        taken - kept
    }

    /// A cleanup re-initialised the list: RX DMA restarts once every
    /// pending cleanup has done so.
    pub(super) fn zc_resume(&mut self, h: usize, now: Time) {
        if let Some(z) = self.timed(h).zc.as_mut() {
            z.stopped -= 1;
            z.stats.rx_restarts += 1;
            if z.stopped == 0 {
                if let Some(at) = z.stopped_at.take() {
                    z.stats.rx_stopped_ns += now.since(at).0 / 1000;
                }
            }
        }
        self.nic_rx_kick(h, now);
    }

    /// Schedule the interfering frames of every host that asks for them:
    /// small UDP broadcasts (64 bytes on the wire before the CRC is left out:
    /// 60 bytes) at times drawn uniformly from the window.
    pub(super) fn zc_schedule_interference(&mut self) {
        use rand::Rng;
        for h in 0..self.hosts.len() {
            let Some(t) = self.timed[h].as_ref() else { continue };
            let cfg = &t.timing.zero_copy.interference;
            if cfg.frames == 0 {
                continue;
            }
            let (n, over) = (cfg.frames, cfg.over.0);
            let mut rng = component_rng(self.seed, &format!("hosts.{}/interference", self.hosts[h].name));
            for i in 0..n {
                let at = Time(rng.gen_range(0..over));
                self.sched.at(at, Priority::WIRE, Event::Interfere(h, i));
            }
        }
    }

    /// Interfering frame number `i` reaches host `h`'s NIC.
    pub(super) fn on_interfere(&mut self, h: usize, i: u64, now: Time) {
        let frame = interference_frame(i);
        if let Some(z) = self.timed(h).zc.as_mut() {
            z.stats.interference_frames += 1;
        }
        self.nic_arrive(h, frame, now);
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
pub(super) fn is_admission(frame: &[u8]) -> bool {
    frame.len() >= 15 && frame[12..14] == ADMISSION_ETHERTYPE.to_be_bytes()
}

fn mac_at(frame: &[u8], at: usize) -> [u8; 6] {
    frame[at..at + 6].try_into().expect("six bytes")
}

impl Sim {
    /// Put control frame `f` on host `h`'s link (the driver writes it straight to the NIC).
    fn zc_send_control(&mut self, h: usize, f: Vec<u8>, now: Time) -> Result<(), crate::Error> {
        let super::Port { link: l, end: d } = self.ports[h];
        self.links[l].chans[d].enqueue(f);
        self.start_wire(l, d, now)
    }

    /// Admission control on the send path: may the NIC start the head TX
    /// frame now? Sends Fast_Req when due; holds a page train of a sender not
    /// admitted until its throttle interval has passed (and books a wake-up).
    pub(super) fn zc_tx_gate(&mut self, h: usize, frame_head: &[u8], now: Time) -> bool {
        let mac = self.hosts[h].mac.0;
        let t = self.timed(h);
        let Some(z) = t.zc.as_mut() else { return true };
        let mode = z.cfg.admission;
        if mode == AdmissionMode::Off || frame_head.len() < 14 || frame_head[0] & 1 == 1 {
            return true;
        }
        let dst = mac_at(frame_head, 0);
        let train = z.fragments_of(frame_head).is_some();
        let mut ask = false;
        let peer = match z.peers.get_mut(&dst) {
            Some(p) => p,
            None if mode == AdmissionMode::Explicit || train => {
                ask = true;
                z.peers.entry(dst).or_insert(Peer { state: Admission::Pending(now), next_train: now })
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
            peer.next_train = now + z.cfg.admission_throttle.dur();
            true
        } else {
            z.stats.throttled += 1;
            let at = peer.next_train;
            if z.kick_at.is_none_or(|k| k > at || k < now) {
                z.kick_at = Some(at);
                self.sched.at(at, Priority::DEVICE, Event::ZcKick(h));
            }
            false
        };
        if ask {
            if let Some(z) = self.timed(h).zc.as_mut() {
                z.stats.fast_requests += 1;
            }
            // A control frame cannot fail for lack of a trace here (as pause frames).
            let _ = self.zc_send_control(h, control_frame(dst, mac, FAST_REQ), now);
        }
        go
    }

    /// A throttle wake-up: try the TX path again.
    pub(super) fn on_zc_kick(&mut self, h: usize, now: Time) {
        if let Some(z) = self.timed(h).zc.as_mut() {
            if z.kick_at == Some(now) {
                z.kick_at = None;
            }
        }
        self.nic_tx_kick(h, now);
    }

    /// A frame reached host `h`'s NIC: a control frame goes to the driver
    /// (handled after the turnaround); any other refreshes the receiver's
    /// view of its fast sender. Returns the frame if the stack should see it.
    pub(super) fn zc_arrive(&mut self, h: usize, mut frame: Vec<u8>, now: Time) -> Option<Vec<u8>> {
        let Some(z) = self.timed(h).zc.as_mut() else { return Some(frame) };
        if z.cfg.fragment && frag::raise_syn_mss(&mut frame, z.own_mss) {
            z.stats.mss_raised += 1;
        }
        if z.cfg.admission == AdmissionMode::Off && !is_admission(&frame) {
            return Some(frame);
        }
        if is_admission(&frame) {
            let at = now + z.cfg.admission_turnaround.dur();
            self.sched.at(at, Priority::DEVICE, Event::Admission(h, frame));
            return None;
        }
        if let Some((peer, seen)) = z.fast.as_mut() {
            if frame.len() >= 12 && frame[6..12] == peer[..] {
                *seen = now;
            }
        }
        Some(frame)
    }

    /// The driver handles control frame `f` (after its turnaround).
    pub(super) fn on_admission(&mut self, h: usize, f: Vec<u8>, now: Time) -> Result<(), crate::Error> {
        let mac = self.hosts[h].mac.0;
        let from = mac_at(&f, 6);
        let t = self.timed(h);
        // Frames still in the NIC (or held on the link by our back pressure)
        // mean the fast sender is not silent: we are holding it back.
        let holding = !t.nic.rx_fifo.is_empty() || !t.nic.rx_held.is_empty();
        let Some(z) = t.zc.as_mut() else { return Ok(()) };
        match f[14] {
            FAST_REQ => {
                let idle = z.cfg.admission_idle.dur();
                let busy = z.fast.is_some_and(|(p, seen)| p != from && (holding || now < seen + idle));
                // Only one stream is fast: a slot handed to a new sender is
                // taken from the silent one (a Fast_NAck revokes it).
                let mut revoke = None;
                let kind = if busy || !z.cfg.speculate {
                    z.stats.fast_nacks_sent += 1;
                    FAST_NACK
                } else {
                    revoke = z.fast.map(|(p, _)| p).filter(|p| *p != from);
                    z.fast = Some((from, now));
                    z.stats.fast_acks_sent += 1;
                    FAST_ACK
                };
                if let Some(old) = revoke {
                    z.stats.fast_nacks_sent += 1;
                    self.zc_send_control(h, control_frame(old, mac, FAST_NACK), now)?;
                }
                self.zc_send_control(h, control_frame(from, mac, kind), now)?;
            }
            kind @ (FAST_ACK | FAST_NACK) => {
                let retry = z.cfg.admission_retry.dur();
                if let Some(p) = z.peers.get_mut(&from) {
                    match p.state {
                        Admission::Pending(asked) => {
                            z.stats.admission_rtt_ns_total += now.since(asked).0 / 1000;
                            if kind == FAST_ACK {
                                z.stats.fast_admitted += 1;
                                p.state = Admission::Fast;
                            } else {
                                z.stats.fast_refused += 1;
                                p.state = Admission::Refused(now + retry);
                            }
                        }
                        // The receiver gave the fast slot to another sender
                        // (while we were fast, or after it had refused us).
                        Admission::Fast | Admission::Refused(_) if kind == FAST_NACK => {
                            z.stats.fast_revoked += 1;
                            if p.state == Admission::Fast {
                                p.state = Admission::Refused(now + retry);
                            }
                        }
                        _ => {}
                    }
                }
                self.nic_tx_kick(h, now);
            }
            _ => {}
        }
        Ok(())
    }
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
