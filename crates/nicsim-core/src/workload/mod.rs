//! Workloads: the applications on the hosts, as state machines that run on
//! the sockets after every stack poll.
//!
//! * **bulk** — one TCP connection; the sender writes a seeded byte pattern
//!   (a byte count, or for a duration) and closes; the receiver checks every
//!   byte against the pattern.
//! * **request_response** — one TCP connection; the client writes a request,
//!   waits for the whole response, and repeats; both directions are checked.
//!
//! Any byte that differs from the pattern fails the run with its offset. A
//! stream is therefore fully described by its pattern (seed, stream number)
//! and length: `nicsim_core::api::pattern_bytes` regenerates it, e.g. to
//! compare with what tshark reassembles from a trace.

pub mod pattern;

use smoltcp::iface::SocketHandle;
use smoltcp::socket::tcp;
use smoltcp::wire::IpAddress;

use crate::config::{BulkConfig, RrConfig, WorkloadConfig};
use crate::engine::Time;
use crate::host::Host;
use pattern::Pattern;

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
struct Checker {
    pattern: Pattern,
    stream: u64,
    received: u64,
}

impl Checker {
    fn new(seed: u64, stream: u64) -> Self {
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

    /// Read everything readable from `sock` (at most `limit` bytes in total).
    fn drain(&mut self, sock: &mut tcp::Socket, limit: u64) -> Result<bool, String> {
        let mut progressed = false;
        while sock.can_recv() && self.received < limit {
            let want = (limit - self.received) as usize;
            let result = sock
                .recv(|buf| {
                    let n = buf.len().min(want);
                    (n, self.take(&buf[..n]).map(|_| n))
                })
                .map_err(|e| format!("recv failed: {e}"))?;
            if result? == 0 {
                break;
            }
            progressed = true;
        }
        Ok(progressed)
    }

    fn report(&self, from: &str, to: &str) -> FlowReport {
        FlowReport { from: from.into(), to: to.into(), bytes: self.received, stream: self.stream }
    }
}

/// Write up to `limit - *sent` pattern bytes into `sock`, `chunk` per call.
fn write_pattern(sock: &mut tcp::Socket, pattern: &Pattern, sent: &mut u64, limit: u64, chunk: u64) -> bool {
    let mut progressed = false;
    while *sent < limit && sock.can_send() {
        let want = (limit - *sent).min(chunk) as usize;
        let at = *sent;
        let n = sock
            .send(|buf| {
                let n = buf.len().min(want);
                pattern.fill(at, &mut buf[..n]);
                (n, n)
            })
            .unwrap_or(0);
        if n == 0 {
            break;
        }
        *sent += n as u64;
        progressed = true;
    }
    progressed
}

/// Sending side of a bulk transfer.
pub struct BulkSender {
    sock: SocketHandle,
    pattern: Pattern,
    total: Option<u64>,
    duration: Option<crate::engine::Dur>,
    chunk: u64,
    sent: u64,
    closed: bool,
    /// When the connection was established and writing began.
    pub started: Option<Time>,
}

/// Receiving side of a bulk transfer.
pub struct BulkReceiver {
    sock: SocketHandle,
    check: Checker,
    total: Option<u64>,
    /// When the last byte reached the application.
    pub last_byte: Option<Time>,
    /// The whole stream arrived (or the sender closed, in duration mode).
    pub done: bool,
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
}

fn host_index(hosts: &[Host], name: &str) -> usize {
    hosts.iter().position(|h| h.name == name).expect("validated scenario names hosts")
}

fn open(hosts: &mut [Host], client: usize, server: usize, port: u16) -> (SocketHandle, SocketHandle) {
    let listen = hosts[server].add_tcp_socket();
    hosts[server].sockets.get_mut::<tcp::Socket>(listen).listen(port).expect("fresh socket listens");
    let remote = (IpAddress::Ipv4(hosts[server].ip), port);
    let h = &mut hosts[client];
    let active = h.add_tcp_socket();
    let sock = h.sockets.get_mut::<tcp::Socket>(active);
    sock.connect(h.iface.context(), remote, EPHEMERAL_PORT).expect("fresh socket connects");
    (active, listen)
}

/// Create the workload's sockets and applications; one [`App`] per host.
pub fn install(cfg: &WorkloadConfig, hosts: &mut [Host], seed: u64) -> Vec<App> {
    let mut apps: Vec<App> = hosts.iter().map(|_| App::Idle).collect();
    match cfg {
        WorkloadConfig::Bulk(BulkConfig { from, to, bytes, duration, write_size, port }) => {
            let (tx, rx) = (host_index(hosts, from), host_index(hosts, to));
            let (active, listen) = open(hosts, tx, rx, *port);
            let pattern = Pattern::new(seed, 0);
            apps[tx] = App::BulkTx(BulkSender {
                sock: active,
                pattern,
                total: bytes.map(|b| b.0),
                duration: duration.map(|d| d.dur()),
                chunk: write_size.0,
                sent: 0,
                closed: false,
                started: None,
            });
            apps[rx] = App::BulkRx(BulkReceiver {
                sock: listen,
                check: Checker::new(seed, 0),
                total: bytes.map(|b| b.0),
                last_byte: None,
                done: false,
            });
        }
        WorkloadConfig::RequestResponse(RrConfig { client, server, request, response, transactions, port }) => {
            let (c, s) = (host_index(hosts, client), host_index(hosts, server));
            let (active, listen) = open(hosts, c, s, *port);
            let (up, down) = (Pattern::new(seed, 0), Pattern::new(seed, 1));
            apps[c] = App::RrClient(RrClient {
                sock: active,
                out: up,
                check: Checker::new(seed, 1),
                request: request.0,
                response: response.0,
                transactions: *transactions,
                sent: 0,
                completed: 0,
                started_tx: None,
                first: None,
                last: None,
                latencies: Vec::with_capacity((*transactions).min(1 << 20) as usize),
                closed: false,
            });
            apps[s] = App::RrServer(RrServer {
                sock: listen,
                out: down,
                check: Checker::new(seed, 0),
                request: request.0,
                response: response.0,
                sent: 0,
                closed: false,
            });
        }
    }
    apps
}

impl App {
    /// Run the application after a poll at `now`. Returns whether it did
    /// anything (so the stack should be polled again), or a fatal error.
    pub fn step(&mut self, now: Time, host: &mut Host) -> Result<bool, String> {
        host.enter(now);
        match self {
            App::Idle => Ok(false),
            App::BulkTx(s) => {
                let sock = host.sockets.get_mut::<tcp::Socket>(s.sock);
                if !sock.may_send() || s.closed {
                    return Ok(false);
                }
                let started = *s.started.get_or_insert(now);
                let limit = match (s.total, s.duration) {
                    (Some(total), _) => total,
                    (None, Some(d)) if now < started + d => u64::MAX,
                    _ => s.sent,
                };
                let mut progressed = write_pattern(sock, &s.pattern, &mut s.sent, limit, s.chunk);
                if s.sent == limit {
                    sock.close();
                    s.closed = true;
                    progressed = true;
                }
                Ok(progressed)
            }
            App::BulkRx(r) => {
                let sock = host.sockets.get_mut::<tcp::Socket>(r.sock);
                let before = r.check.received;
                let progressed = r.check.drain(sock, r.total.unwrap_or(u64::MAX))?;
                if r.check.received > before {
                    r.last_byte = Some(now);
                }
                let finished = match r.total {
                    Some(total) => r.check.received == total,
                    None => {
                        !sock.may_recv()
                            && sock.state() != tcp::State::Listen
                            && sock.state() != tcp::State::SynReceived
                    }
                };
                if finished && !r.done {
                    r.done = true;
                    sock.close();
                    return Ok(true);
                }
                if !r.done && r.total.is_some() && !sock.may_recv() && sock.state() == tcp::State::CloseWait {
                    return Err(format!(
                        "the sender closed after {} of {} bytes",
                        r.check.received,
                        r.total.unwrap_or(0)
                    ));
                }
                Ok(progressed)
            }
            App::RrClient(c) => {
                let sock = host.sockets.get_mut::<tcp::Socket>(c.sock);
                if !sock.may_send() || c.closed {
                    return Ok(false);
                }
                let mut progressed = false;
                loop {
                    let n = c.completed;
                    let request_end = (n + 1) * c.request;
                    if c.sent < request_end {
                        if c.started_tx.is_none() {
                            c.started_tx = Some(now);
                            c.first.get_or_insert(now);
                        }
                        progressed |= write_pattern(sock, &c.out, &mut c.sent, request_end, u64::MAX);
                        if c.sent < request_end {
                            break;
                        }
                    }
                    let response_end = (n + 1) * c.response;
                    progressed |= c.check.drain(sock, response_end)?;
                    if c.check.received < response_end {
                        break;
                    }
                    let start = c.started_tx.take().expect("a request was sent");
                    c.latencies.push(now.since(start).ps());
                    c.completed += 1;
                    c.last = Some(now);
                    if c.completed == c.transactions {
                        sock.close();
                        c.closed = true;
                        return Ok(true);
                    }
                }
                Ok(progressed)
            }
            App::RrServer(s) => {
                let sock = host.sockets.get_mut::<tcp::Socket>(s.sock);
                let mut progressed = false;
                loop {
                    let served = s.sent / s.response;
                    let request_end = (served + 1) * s.request;
                    progressed |= s.check.drain(sock, request_end)?;
                    if s.check.received < request_end || !sock.may_send() {
                        break;
                    }
                    let response_end = (served + 1) * s.response;
                    progressed |= write_pattern(sock, &s.out, &mut s.sent, response_end, u64::MAX);
                    if s.sent < response_end {
                        break;
                    }
                }
                if !s.closed && !sock.may_recv() && sock.state() == tcp::State::CloseWait {
                    sock.close();
                    s.closed = true;
                    progressed = true;
                }
                Ok(progressed)
            }
        }
    }

    /// Whether this application has finished its part.
    pub fn is_done(&self) -> bool {
        match self {
            App::Idle | App::BulkTx(_) | App::RrServer(_) => true,
            App::BulkRx(r) => r.done,
            App::RrClient(c) => c.completed == c.transactions,
        }
    }

    /// The streams this application received and checked.
    pub fn flows(&self, peer: &str, me: &str) -> Vec<FlowReport> {
        match self {
            App::BulkRx(r) => vec![r.check.report(peer, me)],
            App::RrClient(c) => vec![c.check.report(peer, me)],
            App::RrServer(s) => vec![s.check.report(peer, me)],
            App::Idle | App::BulkTx(_) => Vec::new(),
        }
    }
}
