//! UDP workloads.
//!
//! * **udp_stream** (netperf UDP_STREAM, and the traffic sources): the
//!   sender sends datagrams of `size` bytes as fast as its socket takes them,
//!   or at a mean `rate` with equal (CBR) or exponential (Poisson, seeded)
//!   gaps, optionally in on/off bursts, for a `count` or a `duration`; there is no flow control, so the
//!   receiver may get fewer. Each datagram carries its sequence number (8
//!   bytes, little-endian) and then the pattern bytes at offset
//!   `seq × size + 8`, so every datagram is checked on its own and losses
//!   are counted. The sender is finished when its last datagram has left
//!   its socket; the run ends when the receiver has them all, or when
//!   nothing has arrived for `linger` after that.
//!
//! smoltcp holds one IP datagram being fragmented at a time, and a new
//! datagram dispatched meanwhile would overwrite it; so a sender of
//! datagrams larger than the MTU queues the next one only when the previous
//! has been sent whole.
//! * **udp_rr** (netperf UDP_RR): one request datagram, one response
//!   datagram, one transaction at a time. UDP does not retransmit: a lost
//!   datagram stalls the exchange and the run fails at its time limit.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;

use smoltcp::iface::SocketHandle;
use smoltcp::socket::udp;
use smoltcp::wire::IpEndpoint;

use super::pattern::Pattern;
use super::replay::Schedule;
use super::{FlowReport, Op};
use crate::engine::{Dur, Time};
use crate::host::Host;

/// Sender and receiver's shared view of the stream (for ending the run).
#[derive(Debug, Default)]
struct Shared {
    sent: Cell<u64>,
    sent_bytes: Cell<u64>,
    finished_at: Cell<Option<Time>>,
    /// A replayed capture's send times and sizes (pcap replay).
    replay: Option<Arc<Schedule>>,
}

/// Pattern offsets of replayed datagrams: datagram `seq` starts at
/// `seq × REPLAY_STRIDE` (more than the largest datagram).
const REPLAY_STRIDE: u64 = 1 << 16;

impl Shared {
    /// Payload bytes of datagram `seq`.
    fn size(&self, seq: u64, fixed: u64) -> u64 {
        self.replay.as_ref().map_or(fixed, |r| r.sizes[seq as usize])
    }

    /// Pattern offset of datagram `seq`'s bytes after its sequence number.
    fn offset(&self, seq: u64, fixed: u64) -> u64 {
        seq * if self.replay.is_some() { REPLAY_STRIDE } else { fixed } + 8
    }
}

/// The sending side of a UDP stream.
pub struct UdpSender {
    sock: SocketHandle,
    peer: IpEndpoint,
    pattern: Pattern,
    size: u64,
    count: Option<u64>,
    duration: Option<Dur>,
    interval: Option<Dur>,
    poisson: Option<crate::engine::rng::Rng>,
    bursts: Option<(Dur, Dur)>,
    next_at: Option<Time>,
    shared: Rc<Shared>,
    buf: Vec<u8>,
    /// When the first datagram was sent.
    pub started: Option<Time>,
}

/// The receiving side of a UDP stream.
pub struct UdpReceiver {
    sock: SocketHandle,
    pattern: Pattern,
    size: u64,
    linger: Dur,
    shared: Rc<Shared>,
    /// Datagrams received (duplicates included).
    pub received: u64,
    /// Payload bytes received.
    pub bytes: u64,
    /// When the last datagram arrived.
    pub last: Option<Time>,
}

/// Options of a UDP stream.
#[derive(Debug, Clone)]
pub struct StreamOptions {
    /// Payload bytes per datagram (at least 8).
    pub size: u64,
    /// Datagrams to send.
    pub count: Option<u64>,
    /// Or: send for this long.
    pub duration: Option<Dur>,
    /// Mean bit rate of payload (none: as fast as possible).
    pub rate: Option<crate::engine::units::Bandwidth>,
    /// Exponential gaps (seeded) instead of equal ones.
    pub poisson: bool,
    /// On/off bursts: (on, off).
    pub bursts: Option<(Dur, Dur)>,
    /// How long the receiver waits after the last datagram was sent.
    pub linger: Dur,
    /// Replay these send times and sizes instead (`size`, `count`, `rate`
    /// and bursts are then ignored).
    pub replay: Option<Arc<Schedule>>,
}

/// A sender/receiver pair on bound UDP sockets.
pub fn stream_pair(
    tx: SocketHandle,
    rx: SocketHandle,
    peer: IpEndpoint,
    seed: u64,
    o: StreamOptions,
) -> (UdpSender, UdpReceiver) {
    let count = o.replay.as_ref().map_or(o.count, |r| Some(r.sizes.len() as u64));
    let largest = o.replay.as_ref().map_or(o.size, |r| r.max_size());
    let shared = Rc::new(Shared { replay: o.replay.clone(), ..Default::default() });
    let interval = o.rate.filter(|_| o.replay.is_none()).map(|r| Dur(r.ps_for_bits(o.size * 8).0));
    let pattern = Pattern::new(seed, 0);
    let s = UdpSender {
        sock: tx,
        peer,
        pattern,
        size: o.size,
        count,
        duration: o.duration,
        interval,
        poisson: o.poisson.then(|| crate::engine::rng::component_rng(seed, "workload.udp_stream/arrivals")),
        bursts: o.bursts,
        next_at: None,
        shared: shared.clone(),
        buf: vec![0; largest as usize],
        started: None,
    };
    let r =
        UdpReceiver { sock: rx, pattern, size: o.size, linger: o.linger, shared, received: 0, bytes: 0, last: None };
    (s, r)
}

/// Whether a UDP socket surely has room for a datagram of `size` (the ring
/// may need to skip its end, hence twice the size).
pub(super) fn room(sock: &udp::Socket, size: u64) -> bool {
    sock.can_send() && (sock.payload_send_capacity() - sock.send_queue()) as u64 >= 2 * size
}

impl UdpSender {
    /// Datagrams sent so far.
    pub fn sent(&self) -> u64 {
        self.shared.sent.get()
    }

    /// Datagrams sent and to send (when a count or a replay fixes it).
    pub fn progress(&self) -> (u64, Option<u64>) {
        (self.shared.sent.get(), self.count)
    }

    /// Payload bytes sent so far.
    pub fn sent_bytes(&self) -> u64 {
        self.shared.sent_bytes.get()
    }

    /// When the sender finished.
    pub fn finished_at(&self) -> Option<Time> {
        self.shared.finished_at.get()
    }

    /// The next call, or `None` (finished, waiting for room or for the next slot).
    pub fn next_op(&mut self, now: Time, host: &mut Host) -> Option<Op> {
        if self.shared.finished_at.get().is_some() {
            return None;
        }
        let started = *self.started.get_or_insert(now);
        let sent = self.shared.sent.get();
        let over = self.count.is_some_and(|c| sent >= c) || self.duration.is_some_and(|d| now >= started + d);
        if over {
            // Finished once everything written has left the socket.
            let busy = host.fragmenting(now);
            let drained = host.sockets.get::<udp::Socket>(self.sock).send_queue() == 0 && !busy;
            if drained {
                self.shared.finished_at.set(Some(now));
            }
            return None;
        }
        if let Some((on, off)) = self.bursts {
            let cycle = on.0 + off.0;
            let phase = now.since(started).0 % cycle;
            if phase >= on.0 {
                self.next_at = Some(self.next_at.map_or(now, |t| t.max(now)).max(now + Dur(cycle - phase)));
            }
        }
        if let Some(r) = &self.shared.replay {
            self.next_at = Some(started + r.at[sent as usize]);
        }
        if self.next_at.is_some_and(|t| now < t) {
            return None;
        }
        let size = self.shared.size(sent, self.size);
        let fragmented = size + 28 > host.ip_mtu() as u64;
        let busy = fragmented && host.fragmenting(now);
        let sock = host.sockets.get::<udp::Socket>(self.sock);
        let ok = room(sock, size) && (!fragmented || sock.send_queue() == 0 && !busy);
        ok.then_some(Op::SendTo { sock: self.sock, bytes: size })
    }

    /// Send one datagram.
    pub fn perform(&mut self, now: Time, host: &mut Host) -> Result<(), String> {
        let seq = self.shared.sent.get();
        let size = self.shared.size(seq, self.size) as usize;
        let buf = &mut self.buf[..size];
        buf[..8.min(size)].copy_from_slice(&seq.to_le_bytes()[..8.min(size)]);
        if size > 8 {
            self.pattern.fill(self.shared.offset(seq, self.size), &mut buf[8..]);
        }
        let sock = host.sockets.get_mut::<udp::Socket>(self.sock);
        sock.send_slice(buf, self.peer).map_err(|e| format!("UDP send failed: {e}"))?;
        self.shared.sent.set(seq + 1);
        self.shared.sent_bytes.set(self.shared.sent_bytes.get() + size as u64);
        if let Some(mean) = self.interval {
            let gap = match self.poisson.as_mut() {
                // Exponential with the mean gap: −ln(U) × mean, U in (0, 1].
                Some(rng) => {
                    let u: f64 = 1.0 - rand::Rng::gen::<f64>(rng);
                    Dur((-u.ln() * mean.0 as f64) as u64)
                }
                None => mean,
            };
            self.next_at = Some(self.next_at.unwrap_or(now) + gap);
        }
        Ok(())
    }

    /// When the sender wants to run next (constant bit rate), if later than now.
    pub fn wake_at(&self) -> Option<Time> {
        if self.shared.finished_at.get().is_some() {
            return None;
        }
        if let (Some(r), Some(start)) = (&self.shared.replay, self.started) {
            let next = r.at.get(self.shared.sent.get() as usize).map(|&d| start + d);
            // After the last datagram: look again soon to see it drained.
            return next.or(self.next_at);
        }
        match (self.next_at, self.duration, self.started) {
            (Some(t), _, _) => Some(t),
            (None, Some(d), Some(s)) => Some(s + d),
            _ => None,
        }
    }
}

impl UdpReceiver {
    /// The next call: read the datagram at the head of the socket.
    pub fn next_op(&mut self, host: &mut Host) -> Option<Op> {
        let sock = host.sockets.get_mut::<udp::Socket>(self.sock);
        let (data, _) = sock.peek().ok()?;
        Some(Op::RecvFrom { sock: self.sock, bytes: data.len() as u64 })
    }

    /// Read and check one datagram.
    pub fn perform(&mut self, now: Time, host: &mut Host) -> Result<(), String> {
        let sock = host.sockets.get_mut::<udp::Socket>(self.sock);
        let (data, _) = sock.recv().map_err(|e| format!("UDP recv failed: {e}"))?;
        let Some(seq) = data.get(..8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes"))) else {
            return Err(format!("a {}-byte datagram arrived, too short for its sequence number", data.len()));
        };
        let count = self.shared.replay.as_ref().map_or(u64::MAX, |r| r.sizes.len() as u64);
        if seq >= count {
            return Err(format!("datagram {seq} arrived, only {count} were to be sent"));
        }
        let size = self.shared.size(seq, self.size);
        if data.len() as u64 != size {
            return Err(format!("datagram {seq} arrived with {} bytes, {size} were sent", data.len()));
        }
        if let Some(i) = self.pattern.first_mismatch(self.shared.offset(seq, self.size), &data[8..]) {
            return Err(format!("datagram {seq} corrupted at byte {}", i + 8));
        }
        self.received += 1;
        self.bytes += data.len() as u64;
        self.last = Some(now);
        Ok(())
    }

    /// Whether the stream is over at `now`: everything arrived, or nothing
    /// has for `linger` since the sender finished.
    pub fn is_done(&self, now: Time) -> bool {
        self.received >= self.shared.sent.get() && self.shared.finished_at.get().is_some()
            || self.wake_at().is_some_and(|t| now >= t)
    }

    /// When the receiver gives up waiting.
    pub fn wake_at(&self) -> Option<Time> {
        let end = self.shared.finished_at.get()?;
        Some(end.max(self.last.unwrap_or(end)) + self.linger)
    }

    /// What arrived.
    pub fn report(&self, from: &str, to: &str) -> FlowReport {
        FlowReport { from: from.into(), to: to.into(), bytes: self.bytes, stream: 0 }
    }
}

/// One side of UDP request/response: sends `out_size` after receiving (server)
/// or before (client) each `in_size` datagram.
pub struct UdpRrEnd {
    sock: SocketHandle,
    peer: Option<IpEndpoint>,
    out: Pattern,
    inp: Pattern,
    out_size: u64,
    in_size: u64,
    client: bool,
    transactions: u64,
    /// Transactions completed (client) or answered (server).
    pub completed: u64,
    waiting: bool,
    buf: Vec<u8>,
    started_tx: Option<Time>,
    /// First request's start (client).
    pub first: Option<Time>,
    /// Last response's end (client).
    pub last: Option<Time>,
    /// Round-trip time of every transaction, ps (client).
    pub latencies: Vec<u64>,
    /// Bytes received.
    pub bytes: u64,
}

/// A client/server pair.
#[allow(clippy::too_many_arguments)]
pub fn rr_pair(
    client: SocketHandle,
    server: SocketHandle,
    server_at: IpEndpoint,
    seed: u64,
    request: u64,
    response: u64,
    transactions: u64,
) -> (UdpRrEnd, UdpRrEnd) {
    let (up, down) = (Pattern::new(seed, 0), Pattern::new(seed, 1));
    let end = |sock, peer, out, inp, out_size, in_size, client| UdpRrEnd {
        sock,
        peer,
        out,
        inp,
        out_size,
        in_size,
        client,
        transactions,
        completed: 0,
        waiting: !client,
        buf: vec![0; out_size as usize],
        started_tx: None,
        first: None,
        last: None,
        latencies: Vec::new(),
        bytes: 0,
    };
    (
        end(client, Some(server_at), up, down, request, response, true),
        end(server, None, down, up, response, request, false),
    )
}

impl UdpRrEnd {
    /// The next call.
    pub fn next_op(&mut self, now: Time, host: &mut Host) -> Option<Op> {
        if self.client && self.completed == self.transactions {
            return None;
        }
        let sock = host.sockets.get_mut::<udp::Socket>(self.sock);
        if self.waiting {
            let (data, _) = sock.peek().ok()?;
            return Some(Op::RecvFrom { sock: self.sock, bytes: data.len() as u64 });
        }
        if self.client && self.started_tx.is_none() {
            self.started_tx = Some(now);
            self.first.get_or_insert(now);
        }
        room(sock, self.out_size).then_some(Op::SendTo { sock: self.sock, bytes: self.out_size })
    }

    /// Carry out a call.
    pub fn perform(&mut self, op: Op, now: Time, host: &mut Host) -> Result<(), String> {
        let sock = host.sockets.get_mut::<udp::Socket>(self.sock);
        match op {
            Op::RecvFrom { .. } => {
                let (data, meta) = sock.recv().map_err(|e| format!("UDP recv failed: {e}"))?;
                if data.len() as u64 != self.in_size {
                    return Err(format!("a {}-byte datagram arrived, {} expected", data.len(), self.in_size));
                }
                let n = self.completed;
                if let Some(i) = self.inp.first_mismatch(n * self.in_size, data) {
                    return Err(format!("datagram {n} corrupted at byte {i}"));
                }
                self.bytes += data.len() as u64;
                self.peer.get_or_insert(meta.endpoint);
                self.waiting = false;
                if self.client {
                    let start = self.started_tx.take().expect("a request was sent");
                    self.latencies.push(now.since(start).ps());
                    self.completed += 1;
                    self.last = Some(now);
                }
            }
            Op::SendTo { .. } => {
                let n = self.completed;
                self.out.fill(n * self.out_size, &mut self.buf);
                let peer = self.peer.expect("the server answers the client it heard");
                sock.send_slice(&self.buf, peer).map_err(|e| format!("UDP send failed: {e}"))?;
                self.waiting = true;
                if !self.client {
                    self.completed += 1;
                }
            }
            other => unreachable!("UDP request/response makes no {other:?}"),
        }
        Ok(())
    }

    /// Transactions done and to do (client only).
    pub fn progress(&self) -> Option<(u64, Option<u64>)> {
        self.client.then_some((self.completed, Some(self.transactions)))
    }

    /// Whether the client finished its transactions (the server is always done).
    pub fn is_done(&self) -> bool {
        !self.client || self.completed == self.transactions
    }

    /// What arrived.
    pub fn report(&self, from: &str, to: &str) -> FlowReport {
        FlowReport { from: from.into(), to: to.into(), bytes: self.bytes, stream: if self.client { 1 } else { 0 } }
    }
}
