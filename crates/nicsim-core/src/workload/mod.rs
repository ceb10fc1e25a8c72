//! Workloads: the applications on the hosts, as state machines that issue
//! one socket call ([`Op`]) at a time, like a program making blocking
//! system calls. The host decides when a call runs and what it costs (an
//! ideal host: at once and for free), then [`App::perform`] carries it out.
//!
//! * **bulk** — one TCP connection (or `flows` of them, see [`Multi`]); the
//!   sender writes a seeded byte pattern (a byte count, or for a duration)
//!   and closes; the receiver checks every byte against the pattern.
//! * **tcp_crr** — a new connection per request/response ([`crr`]).
//! * **request_response** — one TCP connection; the client writes a request,
//!   waits for the whole response, and repeats; both directions are checked.
//!
//! Any byte that differs from the pattern fails the run with its offset. A
//! stream is therefore fully described by its pattern (seed, stream number)
//! and length: `nicsim_core::api::pattern_bytes` regenerates it, e.g. to
//! compare with what tshark reassembles from a trace.

pub mod crr;
pub mod dolly;
mod install;
pub mod netpipe;
pub mod pattern;
pub mod replay;
pub mod spec;
pub mod udp;
pub mod via;

use smoltcp::iface::SocketHandle;
use smoltcp::socket::tcp;
use smoltcp::socket::udp as udp_socket;
use smoltcp::wire::IpAddress;

use crate::config::{BulkConfig, NetpipeConfig, RrConfig, WorkloadConfig};
use crate::engine::Time;
use crate::host::stack_config::WriteWakeup;
use crate::host::Host;
use pattern::Pattern;
pub use spec::{BulkFlowRow, Outcome, RrStats, RunView, Workload};

/// Create the workload's sockets and applications; one [`App`] per host.
pub fn install(cfg: &WorkloadConfig, hosts: &mut [Host], seed: u64) -> Vec<App> {
    let mut apps: Vec<App> = hosts.iter().map(|_| App::Idle).collect();
    spec::of(cfg).install(hosts, &mut apps, seed);
    apps
}

/// First local port of active opens.
const EPHEMERAL_PORT: u16 = 49152;

/// A byte stream the receiver checked: where it went and what it carried.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FlowReport {
    /// Sending host.
    pub from: String,
    /// Receiving host.
    pub to: String,
    /// Bytes delivered to the receiving application, all verified.
    pub bytes: u64,
    /// Pattern stream number (with the run's seed, regenerates the bytes).
    pub stream: u64,
}

/// Checks an incoming stream against its pattern.
pub(crate) struct Checker {
    pattern: Pattern,
    stream: u64,
    received: u64,
}

impl Checker {
    pub(crate) fn new(seed: u64, stream: u64) -> Self {
        Checker { pattern: Pattern::new(seed, stream), stream, received: 0 }
    }

    fn take(&mut self, data: &[u8]) -> Result<(), String> {
        if let Some(i) = self.pattern.first_mismatch(self.received, data) {
            let at = self.received + i as u64;
            return Err(format!(
                "byte stream corrupted at offset {at}: expected {:#04x}, got {:#04x}",
                self.pattern.byte_at(at),
                data[i]
            ));
        }
        self.received += data.len() as u64;
        Ok(())
    }

    pub(crate) fn report(&self, from: &str, to: &str) -> FlowReport {
        FlowReport { from: from.into(), to: to.into(), bytes: self.received, stream: self.stream }
    }
}

/// One socket call an application makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Write the next `bytes` of the application's outgoing stream.
    Write {
        /// Socket written.
        sock: SocketHandle,
        /// Bytes copied into the socket (there is room for them).
        bytes: u64,
    },
    /// Read `bytes` of the incoming stream (they are in the socket).
    Read {
        /// Socket read.
        sock: SocketHandle,
        /// Bytes copied out of the socket.
        bytes: u64,
    },
    /// Open a TCP connection (an active open from a fresh port).
    Connect {
        /// Socket connecting.
        sock: SocketHandle,
    },
    /// Close the sending side.
    Close {
        /// Socket closed.
        sock: SocketHandle,
    },
    /// Send one UDP datagram of `bytes`.
    SendTo {
        /// UDP socket.
        sock: SocketHandle,
        /// Payload bytes.
        bytes: u64,
    },
    /// Receive the UDP datagram (of `bytes`) at the head of the socket.
    RecvFrom {
        /// UDP socket.
        sock: SocketHandle,
        /// Payload bytes.
        bytes: u64,
    },
    /// VIA `VipPostSend`: send a message of `bytes` from registered memory.
    ViaSend {
        /// Message bytes.
        bytes: u64,
    },
    /// VIA receive: take a completed message of `bytes` off the receive
    /// completion queue and post the next receive descriptor.
    ViaRecv {
        /// Message bytes.
        bytes: u64,
    },
}

impl Op {
    /// Payload bytes the call copies.
    pub fn bytes(&self) -> u64 {
        match *self {
            Op::Write { bytes, .. }
            | Op::Read { bytes, .. }
            | Op::SendTo { bytes, .. }
            | Op::RecvFrom { bytes, .. }
            | Op::ViaSend { bytes }
            | Op::ViaRecv { bytes } => bytes,
            Op::Close { .. } | Op::Connect { .. } => 0,
        }
    }
}

/// Room for a write on `sock` (0 if it cannot send).
pub(crate) fn room(sock: &tcp::Socket) -> u64 {
    if sock.may_send() {
        (sock.send_capacity() - sock.send_queue()) as u64
    } else {
        0
    }
}

/// Sending side of a bulk transfer.
pub struct BulkSender {
    /// Flow number (its pattern stream).
    pub flow: u32,
    sock: SocketHandle,
    pattern: Pattern,
    total: Option<u64>,
    duration: Option<crate::engine::Dur>,
    chunk: u64,
    sent: u64,
    closed: bool,
    /// Blocked on a full send buffer (`tcp.write_wakeup = "third"`): it
    /// writes again once a third of the buffer is free.
    waiting: bool,
    /// When the connection was established and writing began.
    pub started: Option<Time>,
}

/// Receiving side of a bulk transfer.
pub struct BulkReceiver {
    /// Flow number (its pattern stream).
    pub flow: u32,
    /// Sending host's index.
    from: usize,
    sock: SocketHandle,
    check: Checker,
    total: Option<u64>,
    chunk: u64,
    /// When the last byte reached the application.
    pub last_byte: Option<Time>,
    /// When the measured interval began (after the warm-up, `omit`) and
    /// the bytes received by then.
    pub measured: Option<(Time, u64)>,
    /// The whole stream arrived (or the sender closed, in duration mode).
    pub done: bool,
    /// Bandwidth of the disk every chunk read is written to (Dolly), if any.
    disk: Option<crate::engine::units::Bandwidth>,
    /// When the disk finishes the chunk being written.
    disk_busy_until: Option<Time>,
}

impl BulkReceiver {
    /// Bytes received and verified.
    pub fn received(&self) -> u64 {
        self.check.received
    }
}

impl App {
    /// The measured interval begins at `now` (the warm-up, `omit`, is
    /// over): a bulk receiver notes the bytes it has by then.
    pub fn begin_measurement(&mut self, now: Time) {
        match self {
            App::BulkRx(r) => r.measured = Some((now, r.received())),
            App::RrClient(c) => c.measured = Some((now, c.latencies.len())),
            App::Multi(m) => m.members.iter_mut().for_each(|a| a.begin_measurement(now)),
            _ => {}
        }
    }
}

/// Client side of request/response.
pub struct RrClient {
    sock: SocketHandle,
    out: Pattern,
    check: Checker,
    request: u64,
    response: u64,
    transactions: u64,
    sent: u64,
    /// Transactions completed.
    pub completed: u64,
    started_tx: Option<Time>,
    /// First request's start.
    pub first: Option<Time>,
    /// Last response's end.
    pub last: Option<Time>,
    /// Round-trip time of every transaction, ps.
    pub latencies: Vec<u64>,
    closed: bool,
    /// Pause between a response and the next request (a DSM node's work on its page).
    think: crate::engine::Dur,
    /// No request before this instant (the end of the pause).
    not_before: Option<Time>,
    /// No new transaction from this instant on (a run of fixed duration):
    /// the client finishes the one it is in and stops.
    until: Option<Time>,
    /// When the measured interval began (after the warm-up, `omit`) and
    /// the transactions completed by then.
    pub measured: Option<(Time, usize)>,
}

/// Server side of request/response.
pub struct RrServer {
    sock: SocketHandle,
    out: Pattern,
    check: Checker,
    request: u64,
    response: u64,
    sent: u64,
    closed: bool,
    /// The client's host, when the server is one of several (a DSM home's
    /// connections); else the workload's peer.
    client: Option<usize>,
}

/// The application on one host.
pub enum App {
    /// Nothing runs here.
    Idle,
    /// Bulk sender.
    BulkTx(BulkSender),
    /// Bulk receiver.
    BulkRx(BulkReceiver),
    /// Request/response client.
    RrClient(RrClient),
    /// Request/response server.
    RrServer(RrServer),
    /// NetPIPE transmitter.
    NpClient(netpipe::NpClient),
    /// NetPIPE receiver.
    NpServer(netpipe::NpServer),
    /// UDP stream sender (boxed: it carries its own RNG).
    UdpTx(Box<udp::UdpSender>),
    /// UDP stream receiver.
    UdpRx(udp::UdpReceiver),
    /// UDP request/response client or server.
    UdpRr(udp::UdpRrEnd),
    /// TCP_CRR client (a connection per transaction).
    CrrClient(crr::CrrClient),
    /// TCP_CRR server.
    CrrServer(crr::CrrServer),
    /// Several applications on one host (concurrent flows).
    Multi(Multi),
    /// A Dolly node between the first and the last of the chain.
    Relay(dolly::Relay),
    /// The measured host of the echo workload (UDP or VIA).
    Echo(Box<via::EchoClient>),
}

/// Several applications on one host, each on its own sockets. Like one
/// process serving many sockets, the host makes one socket call at a time,
/// offering the next call to the members in turn (round robin).
pub struct Multi {
    /// The applications, in flow order.
    pub members: Vec<App>,
    /// Member asked first for the next call.
    next: usize,
    /// Member whose call was chosen last (it performs it).
    last: usize,
    /// Whether any member can have a current message or a wake-up time
    /// (bulk flows without a disk have neither: no need to ask them all).
    msgs: bool,
    wakes: bool,
}

impl Multi {
    /// Members taking turns.
    pub fn new(members: Vec<App>) -> Multi {
        let msgs = members.iter().any(|m| !matches!(m, App::BulkTx(_) | App::BulkRx(_) | App::Idle));
        let wakes = members.iter().any(|m| match m {
            App::BulkTx(_) | App::Idle => false,
            App::BulkRx(r) => r.disk.is_some(),
            _ => true,
        });
        Multi { members, next: 0, last: 0, msgs, wakes }
    }
}

impl App {
    /// Linux's `tcp_recvmsg` goes on after the socket backlog while the
    /// caller's buffer has room: the rest of a read call on `sock` that
    /// has read `read` bytes so far, or `None` when the call ends (nothing
    /// queued, its buffer full, or an application whose reads do not go on:
    /// only a bulk receiver without a disk reads on).
    pub fn read_more(&self, host: &Host, sock: SocketHandle, read: u64) -> Option<Op> {
        let App::BulkRx(r) = self else { return None };
        if r.sock != sock || r.disk.is_some() || r.done {
            return None;
        }
        let queued = host.sockets.get::<tcp::Socket>(r.sock).recv_queue() as u64;
        let left = r.total.unwrap_or(u64::MAX) - r.check.received;
        let n = queued.min(r.chunk.saturating_sub(read)).min(left);
        (n > 0).then_some(Op::Read { sock, bytes: n })
    }

    /// The next socket call this application makes at `now`, or `None` if
    /// it waits (for data, for room, or because it is finished).
    pub fn next_op(&mut self, now: Time, host: &mut Host) -> Option<Op> {
        match self {
            App::Idle => None,
            App::BulkTx(s) => {
                let sock = host.sockets.get::<tcp::Socket>(s.sock);
                if s.closed || !sock.may_send() {
                    return None;
                }
                let started = *s.started.get_or_insert(now);
                let limit = match (s.total, s.duration) {
                    (Some(total), _) => total,
                    (None, Some(d)) if now < started + d => u64::MAX,
                    _ => s.sent,
                };
                if s.sent == limit {
                    return Some(Op::Close { sock: s.sock });
                }
                let want = (limit - s.sent).min(s.chunk);
                let room = room(sock);
                if host.write_wakeup() == WriteWakeup::Third {
                    // Linux's writer fills whatever room there is; once the
                    // buffer is full it sleeps until a third is free
                    // (`sk_stream_wait_memory`, woken by `sk_stream_write_space`).
                    s.waiting = room == 0 || (s.waiting && room < sock.send_capacity() as u64 / 3);
                    if s.waiting {
                        return None;
                    }
                }
                let n = want.min(room);
                (n > 0).then_some(Op::Write { sock: s.sock, bytes: n })
            }
            App::BulkRx(r) => {
                let sock = host.sockets.get::<tcp::Socket>(r.sock);
                // Done, or still writing the last chunk to its disk.
                if r.done || r.disk_busy_until.is_some_and(|t| now < t) {
                    return None;
                }
                let finished = match r.total {
                    Some(total) => r.check.received == total,
                    None => !sock.may_recv() && !matches!(sock.state(), tcp::State::Listen | tcp::State::SynReceived),
                };
                if finished {
                    return Some(Op::Close { sock: r.sock });
                }
                let n = (sock.recv_queue() as u64).min(r.chunk).min(r.total.unwrap_or(u64::MAX) - r.check.received);
                (n > 0).then_some(Op::Read { sock: r.sock, bytes: n })
            }
            App::RrClient(c) => {
                let sock = host.sockets.get::<tcp::Socket>(c.sock);
                if c.closed || !sock.may_send() {
                    return None;
                }
                if c.completed == c.transactions {
                    return Some(Op::Close { sock: c.sock });
                }
                let request_end = (c.completed + 1) * c.request;
                if c.sent < request_end {
                    if c.started_tx.is_none() && c.until.is_some_and(|t| now >= t) {
                        // Time is up between two transactions: this was the last.
                        c.transactions = c.completed;
                        return Some(Op::Close { sock: c.sock });
                    }
                    if c.not_before.is_some_and(|t| now < t) {
                        return None;
                    }
                    if c.started_tx.is_none() {
                        c.started_tx = Some(now);
                        c.first.get_or_insert(now);
                    }
                    let n = (request_end - c.sent).min(room(sock));
                    return (n > 0).then_some(Op::Write { sock: c.sock, bytes: n });
                }
                let response_end = (c.completed + 1) * c.response;
                let n = (sock.recv_queue() as u64).min(response_end - c.check.received);
                (n > 0).then_some(Op::Read { sock: c.sock, bytes: n })
            }
            App::NpClient(c) => c.next_op(now, host),
            App::NpServer(s) => s.next_op(now, host),
            App::UdpTx(s) => s.next_op(now, host),
            App::UdpRx(r) => r.next_op(host),
            App::UdpRr(e) => e.next_op(now, host),
            App::CrrClient(c) => c.next_op(now, host),
            App::CrrServer(s) => s.next_op(host),
            App::Relay(r) => r.next_op(now, host),
            App::Echo(e) => e.next_op(now, host),
            App::Multi(m) => {
                let n = m.members.len();
                for k in 0..n {
                    let i = (m.next + k) % n;
                    if let Some(op) = m.members[i].next_op(now, host) {
                        (m.last, m.next) = (i, (i + 1) % n);
                        return Some(op);
                    }
                }
                None
            }
            App::RrServer(s) => {
                let sock = host.sockets.get::<tcp::Socket>(s.sock);
                if s.closed {
                    return None;
                }
                let served = s.sent / s.response;
                let request_end = (served + 1) * s.request;
                if s.check.received < request_end {
                    let n = (sock.recv_queue() as u64).min(request_end - s.check.received);
                    if n > 0 {
                        return Some(Op::Read { sock: s.sock, bytes: n });
                    }
                    let peer_closed = !sock.may_recv() && sock.state() == tcp::State::CloseWait;
                    return peer_closed.then_some(Op::Close { sock: s.sock });
                }
                let n = ((served + 1) * s.response - s.sent).min(room(sock));
                (n > 0).then_some(Op::Write { sock: s.sock, bytes: n })
            }
        }
    }

    /// Carry out `op` (chosen by [`App::next_op`]) at `now`. A byte that
    /// differs from the stream's pattern is a fatal error.
    pub fn perform(&mut self, op: Op, now: Time, host: &mut Host) -> Result<(), String> {
        host.enter(now);
        match self {
            App::NpClient(c) => return c.perform(op, now, host),
            App::NpServer(s) => return s.perform(op, host),
            App::UdpTx(s) => return s.perform(now, host),
            App::UdpRx(r) => return r.perform(now, host),
            App::UdpRr(e) => return e.perform(op, now, host),
            App::CrrClient(c) => return c.perform(op, now, host),
            App::CrrServer(s) => return s.perform(op, host),
            App::Multi(m) => return m.members[m.last].perform(op, now, host),
            App::Relay(r) => return r.perform(op, now, host),
            App::Echo(e) => return e.perform(op, now, host),
            _ => {}
        }
        let sock = match op {
            Op::Write { sock, .. } | Op::Read { sock, .. } | Op::Close { sock } => sock,
            Op::SendTo { .. } | Op::RecvFrom { .. } | Op::Connect { .. } | Op::ViaSend { .. } | Op::ViaRecv { .. } => {
                unreachable!("UDP calls and connects are made by other applications")
            }
        };
        let sock = host.sockets.get_mut::<tcp::Socket>(sock);
        match (self, op) {
            (App::BulkTx(s), Op::Write { bytes, .. }) => write_exact(sock, &s.pattern, &mut s.sent, bytes),
            (App::BulkTx(s), Op::Close { .. }) => {
                sock.close();
                s.closed = true;
                Ok(())
            }
            (App::BulkRx(r), Op::Read { bytes, .. }) => {
                read_exact(sock, &mut r.check, bytes)?;
                // With a disk, the chunk is written before the next read, and
                // counts as delivered once it is on the disk.
                let stored = match r.disk {
                    Some(rate) => now + crate::engine::Dur(rate.ps_for_bits(bytes * 8).0),
                    None => now,
                };
                r.disk_busy_until = r.disk.map(|_| stored);
                r.last_byte = Some(stored);
                Ok(())
            }
            (App::BulkRx(r), Op::Close { .. }) => {
                sock.close();
                r.done = true;
                Ok(())
            }
            (App::RrClient(c), Op::Write { bytes, .. }) => write_exact(sock, &c.out, &mut c.sent, bytes),
            (App::RrClient(c), Op::Read { bytes, .. }) => {
                read_exact(sock, &mut c.check, bytes)?;
                if c.check.received == (c.completed + 1) * c.response {
                    let start = c.started_tx.take().expect("a request was sent");
                    c.latencies.push(now.since(start).ps());
                    c.completed += 1;
                    c.last = Some(now);
                    c.not_before = (c.think > crate::engine::Dur::ZERO).then(|| now + c.think);
                }
                Ok(())
            }
            (App::RrClient(c), Op::Close { .. }) => {
                sock.close();
                c.closed = true;
                Ok(())
            }
            (App::RrServer(s), Op::Read { bytes, .. }) => read_exact(sock, &mut s.check, bytes),
            (App::RrServer(s), Op::Write { bytes, .. }) => write_exact(sock, &s.out, &mut s.sent, bytes),
            (App::RrServer(s), Op::Close { .. }) => {
                sock.close();
                s.closed = true;
                Ok(())
            }
            (_, op) => unreachable!("an application performs only the calls it chose: {op:?}"),
        }
    }

    /// The message (request/response transaction) this host is working on,
    /// for per-message cycle breakdowns; `None` for bulk transfers.
    pub fn current_msg(&self) -> Option<u64> {
        match self {
            App::RrClient(c) => Some(c.completed),
            App::RrServer(s) => Some(s.sent / s.response),
            App::CrrClient(c) => Some(c.current_msg()),
            App::CrrServer(s) => Some(s.current_msg()),
            App::Echo(e) => Some(e.current_msg()),
            App::Multi(m) if !m.msgs => None,
            App::Multi(m) => m.members.iter().find_map(App::current_msg),
            _ => None,
        }
    }

    /// When this application wants to run again even if nothing arrives
    /// (a constant-bit-rate sender's next slot, a receiver's deadline).
    pub fn wake_at(&self) -> Option<Time> {
        match self {
            App::UdpTx(s) => s.wake_at(),
            App::UdpRx(r) => r.wake_at(),
            App::BulkRx(r) => r.disk_busy_until,
            App::Relay(r) => r.wake_at(),
            App::RrClient(c) => c.not_before,
            App::Multi(m) if !m.wakes => None,
            App::Multi(m) => m.members.iter().filter_map(App::wake_at).min(),
            _ => None,
        }
    }

    /// Work done and work in all (when known), for progress displays;
    /// `None` for applications that only serve or receive.
    pub fn progress(&self) -> Option<(u64, Option<u64>)> {
        match self {
            App::NpClient(c) => Some(c.progress()),
            App::RrClient(c) => Some((c.completed, c.until.is_none().then_some(c.transactions))),
            App::CrrClient(c) => Some((c.completed, Some(c.transactions()))),
            App::UdpRr(e) => e.progress(),
            App::BulkRx(r) => Some((r.check.received, r.total)),
            App::UdpTx(s) => Some(s.progress()),
            App::Echo(e) => Some(e.progress()),
            App::Multi(m) => {
                let parts: Vec<_> = m.members.iter().filter_map(App::progress).collect();
                (!parts.is_empty()).then(|| {
                    let done = parts.iter().map(|p| p.0).sum();
                    (done, parts.iter().map(|p| p.1).sum::<Option<u64>>())
                })
            }
            _ => None,
        }
    }

    /// Whether this application has finished its part at `now`.
    pub fn is_done(&self, now: Time) -> bool {
        match self {
            App::Idle | App::BulkTx(_) | App::RrServer(_) | App::NpServer(_) | App::UdpTx(_) | App::CrrServer(_) => {
                true
            }
            App::CrrClient(c) => c.is_done(),
            App::Multi(m) => m.members.iter().all(|a| a.is_done(now)),
            App::UdpRx(r) => r.is_done(now),
            App::UdpRr(e) => e.is_done(),
            App::Echo(e) => e.is_done(),
            App::NpClient(c) => c.is_done(),
            App::BulkRx(r) => r.done,
            App::RrClient(c) => c.completed == c.transactions,
            App::Relay(r) => r.is_done(),
        }
    }

    /// The streams this application received and checked; `peer` names
    /// the host at the other end (a bulk receiver knows its own sender).
    pub fn flows(&self, peer: &str, me: &str, hosts: &[Host]) -> Vec<FlowReport> {
        match self {
            App::BulkRx(r) => vec![r.check.report(&hosts[r.from].name, me)],
            App::RrClient(c) => vec![c.check.report(peer, me)],
            App::RrServer(s) => vec![s.check.report(s.client.map_or(peer, |i| hosts[i].name.as_str()), me)],
            App::NpClient(c) => vec![c.check_report(peer, me)],
            App::NpServer(s) => vec![s.check_report(peer, me)],
            App::UdpRx(r) => vec![r.report(peer, me)],
            App::UdpRr(e) => vec![e.report(peer, me)],
            App::CrrClient(c) => vec![c.report(peer, me)],
            App::CrrServer(s) => vec![s.report(peer, me)],
            App::Multi(m) => m.members.iter().flat_map(|a| a.flows(peer, me, hosts)).collect(),
            App::Relay(r) => vec![r.check.report(&hosts[r.from].name, me)],
            App::Echo(e) => vec![e.report(peer, me)],
            App::Idle | App::BulkTx(_) | App::UdpTx(_) => Vec::new(),
        }
    }
}

/// Write exactly `bytes` of `pattern` from offset `*sent`.
pub(crate) fn write_exact(sock: &mut tcp::Socket, pattern: &Pattern, sent: &mut u64, bytes: u64) -> Result<(), String> {
    let target = *sent + bytes;
    while *sent < target {
        let (at, want) = (*sent, (target - *sent) as usize);
        let n = sock
            .send(|buf| {
                let n = buf.len().min(want);
                pattern.fill(at, &mut buf[..n]);
                (n, n)
            })
            .map_err(|e| format!("send failed: {e}"))?;
        if n == 0 {
            return Err(format!("the socket took {} of {bytes} bytes it had room for", bytes - (target - *sent)));
        }
        *sent += n as u64;
    }
    Ok(())
}

/// Read exactly `bytes` into `check`.
pub(crate) fn read_exact(sock: &mut tcp::Socket, check: &mut Checker, bytes: u64) -> Result<(), String> {
    let target = check.received + bytes;
    while check.received < target {
        let want = (target - check.received) as usize;
        let n = sock
            .recv(|buf| {
                let n = buf.len().min(want);
                (n, check.take(&buf[..n]).map(|_| n))
            })
            .map_err(|e| format!("recv failed: {e}"))??;
        if n == 0 {
            return Err(format!("the socket held fewer than the {bytes} bytes it reported"));
        }
    }
    Ok(())
}
