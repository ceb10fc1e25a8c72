//! TCP connect/request/response (netperf TCP_CRR): every transaction opens
//! a new connection from a fresh ephemeral port, writes the request, reads
//! the whole response and closes; the next transaction connects at once,
//! while the previous connection still finishes its closing handshake.
//!
//! A transaction's time runs from the `connect` call to the last response
//! byte read, so the three-way handshake is part of it, as in netperf. The
//! client closes first (its side goes to TIME-WAIT); the server closes when
//! it sees the client's FIN. The server keeps one socket listening at all
//! times: as soon as the listening socket takes a SYN, it becomes that
//! connection and a fresh socket listens on the port.
//!
//! Sockets of finished connections are removed from the stack once they
//! are closed (server) or in TIME-WAIT (client, whose last ACK has then been
//! sent): smoltcp's TIME-WAIT would otherwise keep every one for 10 s and
//! each poll would walk them all. Requests and responses are each one
//! seeded pattern stream across all connections, checked byte by byte.

use smoltcp::iface::SocketHandle;
use smoltcp::socket::tcp;
use smoltcp::wire::IpEndpoint;

use super::pattern::Pattern;
use super::{read_exact, room, write_exact, Checker, FlowReport, Op};
use crate::engine::Time;
use crate::host::Host;

/// First and number of ephemeral ports the client cycles through (IANA's
/// dynamic range, 49152–65535).
const PORT_BASE: u16 = 49152;
const PORTS: u64 = 16384;

/// Where the client's current connection is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// No connection: the next call is `connect`.
    Idle,
    /// `connect` chosen but not yet carried out.
    Connecting,
    /// Connected (or connecting): write the request, read the response.
    Open,
    /// Response read: the next call is `close`.
    Closing,
}

/// The client: connects, sends one request, reads one response, closes.
pub struct CrrClient {
    server: IpEndpoint,
    sock: Option<SocketHandle>,
    phase: Phase,
    /// Closed connections still in the stack.
    closing: Vec<SocketHandle>,
    out: Pattern,
    check: Checker,
    request: u64,
    response: u64,
    transactions: u64,
    sent: u64,
    started_tx: Option<Time>,
    /// Transactions completed.
    pub completed: u64,
    /// First transaction's `connect`.
    pub first: Option<Time>,
    /// Last response's end.
    pub last: Option<Time>,
    /// Time of every transaction (connect to last response byte), ps.
    pub latencies: Vec<u64>,
    /// A failure the next call reports (as a real call would return an error).
    fault: Option<String>,
}

/// One accepted connection on the server.
struct Conn {
    sock: SocketHandle,
    /// Request bytes read on this connection.
    got: u64,
    /// Response bytes written on this connection.
    sent: u64,
    closed: bool,
}

/// The server: answers one request per connection and closes after the client.
pub struct CrrServer {
    port: u16,
    listen: SocketHandle,
    conns: Vec<Conn>,
    out: Pattern,
    check: Checker,
    request: u64,
    response: u64,
    /// Responses sent in full.
    pub served: u64,
    fault: Option<String>,
}

/// A client and a server: `listen` is already listening on `port` of the server at `server`.
pub fn pair(
    listen: SocketHandle,
    server: IpEndpoint,
    seed: u64,
    request: u64,
    response: u64,
    transactions: u64,
) -> (CrrClient, CrrServer) {
    let client = CrrClient {
        server,
        sock: None,
        phase: Phase::Idle,
        closing: Vec::new(),
        out: Pattern::new(seed, 0),
        check: Checker::new(seed, 1),
        request,
        response,
        transactions,
        sent: 0,
        started_tx: None,
        completed: 0,
        first: None,
        last: None,
        latencies: Vec::with_capacity(transactions.min(1 << 20) as usize),
        fault: None,
    };
    let server = CrrServer {
        port: server.port,
        listen,
        conns: Vec::new(),
        out: Pattern::new(seed, 1),
        check: Checker::new(seed, 0),
        request,
        response,
        served: 0,
        fault: None,
    };
    (client, server)
}

impl CrrClient {
    /// The next call, or `None` while waiting (for the handshake, the response, or at the end).
    pub fn next_op(&mut self, now: Time, host: &mut Host) -> Option<Op> {
        if self.completed == self.transactions && self.phase == Phase::Idle {
            return None;
        }
        match self.phase {
            Phase::Idle => {
                // Reap earlier connections whose closing handshake is over.
                self.closing.retain(|&h| {
                    let state = host.sockets.get::<tcp::Socket>(h).state();
                    let gone = matches!(state, tcp::State::Closed | tcp::State::TimeWait);
                    if gone {
                        host.remove_tcp_socket(h);
                    }
                    !gone
                });
                let sock = host.add_tcp_socket();
                self.sock = Some(sock);
                self.phase = Phase::Connecting;
                self.started_tx = Some(now);
                self.first.get_or_insert(now);
                Some(Op::Connect { sock })
            }
            Phase::Connecting => self.sock.map(|sock| Op::Connect { sock }),
            Phase::Closing => self.sock.map(|sock| Op::Close { sock }),
            Phase::Open => {
                let handle = self.sock.expect("an open connection has a socket");
                let sock = host.sockets.get::<tcp::Socket>(handle);
                if sock.state() == tcp::State::Closed {
                    let n = self.completed + 1;
                    self.fault = Some(format!("connection {n} to {} was refused or reset", self.server));
                    return Some(Op::Close { sock: handle });
                }
                if !sock.may_send() {
                    return None;
                }
                let request_end = (self.completed + 1) * self.request;
                if self.sent < request_end {
                    let n = (request_end - self.sent).min(room(sock));
                    return (n > 0).then_some(Op::Write { sock: handle, bytes: n });
                }
                let response_end = (self.completed + 1) * self.response;
                let n = (sock.recv_queue() as u64).min(response_end - self.check.received);
                (n > 0).then_some(Op::Read { sock: handle, bytes: n })
            }
        }
    }

    /// Carry out a call chosen by [`CrrClient::next_op`].
    pub fn perform(&mut self, op: Op, now: Time, host: &mut Host) -> Result<(), String> {
        if let Some(fault) = self.fault.take() {
            return Err(fault);
        }
        match op {
            Op::Connect { sock } => {
                let port = PORT_BASE + (self.completed % PORTS) as u16;
                let cx = host.iface.context();
                let s = host.sockets.get_mut::<tcp::Socket>(sock);
                s.connect(cx, self.server, port).map_err(|e| format!("connect failed: {e}"))?;
                self.phase = Phase::Open;
            }
            Op::Write { sock, bytes } => {
                write_exact(host.sockets.get_mut::<tcp::Socket>(sock), &self.out, &mut self.sent, bytes)?;
            }
            Op::Read { sock, bytes } => {
                read_exact(host.sockets.get_mut::<tcp::Socket>(sock), &mut self.check, bytes)?;
                if self.check.received == (self.completed + 1) * self.response {
                    let start = self.started_tx.take().expect("a transaction was started");
                    self.latencies.push(now.since(start).ps());
                    self.completed += 1;
                    self.last = Some(now);
                    self.phase = Phase::Closing;
                }
            }
            Op::Close { sock } => {
                host.sockets.get_mut::<tcp::Socket>(sock).close();
                self.closing.push(sock);
                self.sock = None;
                self.phase = Phase::Idle;
            }
            other => unreachable!("a TCP_CRR client makes no {other:?}"),
        }
        Ok(())
    }

    /// The transaction in progress, for per-message breakdowns.
    pub fn current_msg(&self) -> u64 {
        self.completed
    }

    /// Transactions to make.
    pub fn transactions(&self) -> u64 {
        self.transactions
    }

    /// Whether every transaction completed.
    pub fn is_done(&self) -> bool {
        self.completed == self.transactions
    }

    /// The response stream it checked.
    pub fn report(&self, from: &str, to: &str) -> FlowReport {
        self.check.report(from, to)
    }
}

impl CrrServer {
    /// The next call: read a request, write its response, or close a
    /// connection the client closed. Accepts connections as a side effect.
    pub fn next_op(&mut self, host: &mut Host) -> Option<Op> {
        if host.sockets.get::<tcp::Socket>(self.listen).state() != tcp::State::Listen {
            // The listening socket took a SYN: it is now that connection.
            self.conns.push(Conn { sock: self.listen, got: 0, sent: 0, closed: false });
            let fresh = host.add_tcp_socket();
            host.sockets.get_mut::<tcp::Socket>(fresh).listen(self.port).expect("a fresh socket listens");
            self.listen = fresh;
        }
        self.conns.retain(|c| {
            let gone = c.closed && host.sockets.get::<tcp::Socket>(c.sock).state() == tcp::State::Closed;
            if gone {
                host.remove_tcp_socket(c.sock);
            }
            !gone
        });
        for c in &self.conns {
            let sock = host.sockets.get::<tcp::Socket>(c.sock);
            if c.got < self.request {
                let n = (sock.recv_queue() as u64).min(self.request - c.got);
                if n > 0 {
                    return Some(Op::Read { sock: c.sock, bytes: n });
                }
                if !sock.may_recv() && sock.state() != tcp::State::SynReceived {
                    let (got, want) = (c.got, self.request);
                    self.fault = Some(format!("the client closed a connection after {got} of {want} request bytes"));
                    return Some(Op::Close { sock: c.sock });
                }
                // Connections are served in order: a later one waits for this one.
                return None;
            }
            if c.sent < self.response {
                let n = (self.response - c.sent).min(room(sock));
                return (n > 0).then_some(Op::Write { sock: c.sock, bytes: n });
            }
            if !c.closed && sock.state() == tcp::State::CloseWait {
                return Some(Op::Close { sock: c.sock });
            }
        }
        None
    }

    /// Carry out a call chosen by [`CrrServer::next_op`].
    pub fn perform(&mut self, op: Op, host: &mut Host) -> Result<(), String> {
        if let Some(fault) = self.fault.take() {
            return Err(fault);
        }
        let (Op::Read { sock, .. } | Op::Write { sock, .. } | Op::Close { sock }) = op else {
            unreachable!("a TCP_CRR server makes no {op:?}")
        };
        let c = self.conns.iter_mut().find(|c| c.sock == sock).expect("the call is on an accepted connection");
        let s = host.sockets.get_mut::<tcp::Socket>(sock);
        match op {
            Op::Read { bytes, .. } => {
                read_exact(s, &mut self.check, bytes)?;
                c.got += bytes;
            }
            Op::Write { bytes, .. } => {
                let mut total = self.served * self.response + c.sent;
                write_exact(s, &self.out, &mut total, bytes)?;
                c.sent += bytes;
                if c.sent == self.response {
                    self.served += 1;
                }
            }
            _ => {
                s.close();
                c.closed = true;
            }
        }
        Ok(())
    }

    /// The transaction being answered, for per-message breakdowns.
    pub fn current_msg(&self) -> u64 {
        self.served
    }

    /// The request stream it checked.
    pub fn report(&self, from: &str, to: &str) -> FlowReport {
        self.check.report(from, to)
    }
}
