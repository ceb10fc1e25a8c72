//! NetPIPE 3.7 (`NPtcp`) as a workload: the block-size schedule, the
//! perturbations, the repeat count from the previous size's time, the
//! minimum over trials and the one-way time, as the real tool computes them.
//!
//! * **Schedule** (`NetPIPE.c`): `len` starts at `start`; `inc = start/2`
//!   (1 if `start` ≤ 1), `nq = 1` (0 if `start` ≤ 1). Each step first
//!   doubles `inc` when `nq > 2` and `nq` is odd, then tests `len − p`,
//!   `len`, `len + p` (only `len` unless `inc > p + 1`), then
//!   `len += inc; nq += 1`. Stop past `upper`, after 8000 − 3 samples, or when
//!   the last time exceeds the stop time (1 s).
//! * **Repeats**: `nrepeat = max(RUNTM / ((b / (b − inc + 1)) · tlast), TRIALS)`
//!   with `b` the block size and `tlast` the previous size's time, seeded by
//!   100 round trips of the start size divided by 200. RUNTM = 0.10 s and
//!   TRIALS = 3 (0.25 s and 7 with `final`, NetPIPE built with `-DFINAL`).
//! * **Timing**: a trial's time divided by `nrepeat`, halved for ping-pong
//!   (one-way time); the minimum over trials is reported. Stream mode (`-s`)
//!   sends `nrepeat` blocks one way, the receiver answers one byte at the end,
//!   and the time is not halved.
//!
//! NetPIPE's own untimed synchronisation between sizes is instantaneous here
//! (the two ends share the block size out of band).

use std::cell::Cell;
use std::rc::Rc;

use smoltcp::iface::SocketHandle;
use smoltcp::socket::{tcp, udp as udp_socket};
use smoltcp::wire::IpEndpoint;

use super::pattern::Pattern;
use super::{read_exact, room, write_exact, Checker, Op};
use crate::engine::{Dur, Time};
use crate::host::Host;

/// NetPIPE's limit on samples (`NSAMP`).
pub const NSAMP: usize = 8000;
/// Round trips used to seed `tlast` (`LATENCYREPS`).
pub const LATENCY_REPS: u64 = 100;

/// One block size of the schedule: the size tested and the increment in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// Bytes per message.
    pub bytes: u64,
    /// NetPIPE's `inc` when this size is tested (it enters `nrepeat`).
    pub inc: u64,
}

/// NetPIPE's block-size schedule from `start` up to `upper`, perturbation `p`.
#[derive(Debug, Clone)]
pub struct Schedule {
    len: u64,
    inc: u64,
    nq: u64,
    p: u64,
    upper: u64,
    pending: Vec<Step>,
}

impl Schedule {
    /// The schedule of `NPtcp -l start -u upper -p p`.
    pub fn new(start: u64, upper: u64, p: u64) -> Schedule {
        let (inc, nq) = if start > 1 { (start / 2, 1) } else { (1, 0) };
        Schedule { len: start.max(1), inc, nq, p, upper, pending: Vec::new() }
    }
}

impl Iterator for Schedule {
    type Item = Step;

    fn next(&mut self) -> Option<Step> {
        if self.pending.is_empty() {
            if self.len > self.upper {
                return None;
            }
            if self.nq > 2 && self.nq % 2 == 1 {
                self.inc += self.inc;
            }
            let perturbed = self.p > 0 && self.inc > self.p + 1;
            let sizes: Vec<u64> =
                if perturbed { vec![self.len - self.p, self.len, self.len + self.p] } else { vec![self.len] };
            self.pending = sizes.into_iter().rev().map(|bytes| Step { bytes, inc: self.inc }).collect();
            self.len += self.inc;
            self.nq += 1;
        }
        self.pending.pop()
    }
}

/// One measured block size.
#[derive(Debug, Clone, serde::Serialize)]
pub struct NetpipePoint {
    /// Bytes per message.
    pub bytes: u64,
    /// Messages per trial.
    pub nrepeat: u64,
    /// One-way time per message (ping-pong) or time per message (stream), seconds: the minimum over trials.
    pub time_s: f64,
    /// Throughput in NetPIPE's Mbps: bytes × 8 / time / 2²⁰.
    pub mbps: f64,
}

/// The knobs of a NetPIPE run.
#[derive(Debug, Clone)]
pub struct Options {
    /// First block size (`-l`).
    pub start: u64,
    /// Last block size (`-u`).
    pub upper: u64,
    /// Perturbation (`-p`).
    pub perturbation: u64,
    /// Stream mode (`-s`).
    pub stream: bool,
    /// Bidirectional mode (`-2`).
    pub bidir: bool,
    /// Target time per trial (RUNTM).
    pub run_time: Dur,
    /// Trials per size (TRIALS).
    pub trials: u64,
    /// Stop once a message takes longer than this (STOPTM).
    pub stop_time: Dur,
}

#[derive(Debug, Clone, Copy)]
enum Phase {
    /// Seeding `tlast`: round trip `i` of [`LATENCY_REPS`].
    Latency {
        i: u64,
        t0: Time,
    },
    /// Trial `trial` of the current size, message `rep` of `nrepeat`.
    Trial {
        trial: u64,
        rep: u64,
        t0: Time,
    },
    /// Waiting for the receiver's one-byte answer at the end of a stream trial.
    StreamAck {
        trial: u64,
        t0: Time,
    },
    Finished,
}

/// The transport a NetPIPE end uses: a TCP connection, or a UDP socket
/// sending each block as datagrams of at most the IP MTU less 28 bytes.
pub enum Io {
    /// A connected TCP socket.
    Tcp(SocketHandle),
    /// A bound UDP socket; the receiver learns its peer from the first datagram.
    Udp {
        /// The socket.
        sock: SocketHandle,
        /// Where datagrams go.
        peer: Option<IpEndpoint>,
        /// Scratch buffer of one datagram.
        buf: Vec<u8>,
    },
}

impl Io {
    /// A UDP end sending to `peer` (None: the receiver, which answers whoever sent).
    pub fn udp(sock: SocketHandle, peer: Option<IpEndpoint>) -> Io {
        Io::Udp { sock, peer, buf: Vec::new() }
    }

    /// The call that sends up to `want` more bytes of the block, if it can now.
    fn send_op(&self, host: &mut Host, want: u64) -> Option<Op> {
        match *self {
            Io::Tcp(sock) => {
                let n = want.min(room(host.sockets.get::<tcp::Socket>(sock)));
                (n > 0).then_some(Op::Write { sock, bytes: n })
            }
            Io::Udp { sock, .. } => {
                let n = want.min(host.ip_mtu() as u64 - 28);
                let ok = n > 0 && super::udp::room(host.sockets.get::<udp_socket::Socket>(sock), n);
                ok.then_some(Op::SendTo { sock, bytes: n })
            }
        }
    }

    /// The call that receives up to `want` more bytes of the block, if some are there.
    fn recv_op(&self, host: &mut Host, want: u64) -> Option<Op> {
        match *self {
            Io::Tcp(sock) => {
                let n = (host.sockets.get::<tcp::Socket>(sock).recv_queue() as u64).min(want);
                (n > 0).then_some(Op::Read { sock, bytes: n })
            }
            Io::Udp { sock, .. } => {
                let (data, _) = host.sockets.get_mut::<udp_socket::Socket>(sock).peek().ok()?;
                (want > 0).then_some(Op::RecvFrom { sock, bytes: data.len() as u64 })
            }
        }
    }

    /// Send `bytes` of `pattern` from offset `*sent`.
    fn write(&mut self, host: &mut Host, pattern: &Pattern, sent: &mut u64, bytes: u64) -> Result<(), String> {
        match self {
            Io::Tcp(sock) => write_exact(host.sockets.get_mut::<tcp::Socket>(*sock), pattern, sent, bytes),
            Io::Udp { sock, peer, buf } => {
                buf.resize(bytes as usize, 0);
                pattern.fill(*sent, buf);
                let to = peer.ok_or("the NetPIPE receiver sent before it heard from the transmitter")?;
                let s = host.sockets.get_mut::<udp_socket::Socket>(*sock);
                s.send_slice(buf, to).map_err(|e| format!("UDP send failed: {e}"))?;
                *sent += bytes;
                Ok(())
            }
        }
    }

    /// Receive `bytes` into `check`; a datagram of another size is an error.
    fn read(&mut self, host: &mut Host, check: &mut Checker, bytes: u64) -> Result<(), String> {
        match self {
            Io::Tcp(sock) => read_exact(host.sockets.get_mut::<tcp::Socket>(*sock), check, bytes),
            Io::Udp { sock, peer, .. } => {
                let (data, meta) = host
                    .sockets
                    .get_mut::<udp_socket::Socket>(*sock)
                    .recv()
                    .map_err(|e| format!("UDP recv failed: {e}"))?;
                if data.len() as u64 != bytes {
                    return Err(format!("a {}-byte datagram arrived, {bytes} expected", data.len()));
                }
                check.take(data).map_err(|e| {
                    format!(
                        "a UDP datagram was lost or damaged ({e}); UDP does not retransmit, so NetPIPE over \
                         UDP needs a lossless link and a receiver that keeps up with the wire"
                    )
                })?;
                peer.get_or_insert(meta.endpoint);
                Ok(())
            }
        }
    }

    fn tcp(&self) -> Option<SocketHandle> {
        match *self {
            Io::Tcp(sock) => Some(sock),
            Io::Udp { .. } => None,
        }
    }
}

/// What the two ends agree on out of band (NetPIPE's untimed sync).
#[derive(Debug, Default)]
struct Shared {
    /// Block size in use.
    len: Cell<u64>,
    /// Blocks still to come in the current stream trial (0: ping-pong).
    stream_left: Cell<u64>,
    /// Bidirectional messages the receiver may start: its trials' sync.
    bidir_budget: Cell<u64>,
}

/// The transmitting side (NetPIPE's `-h` host).
pub struct NpClient {
    io: Io,
    out: Pattern,
    check: Checker,
    opts: Options,
    schedule: Schedule,
    /// Block size and stream state, shared with the receiver.
    shared: Rc<Shared>,
    step: Step,
    nrepeat: u64,
    tlast: f64,
    best: f64,
    phase: Phase,
    /// Bytes written / read within the current message.
    wrote: u64,
    read: u64,
    sent: u64,
    closed: bool,
    /// Measured points so far.
    pub points: Vec<NetpipePoint>,
}

/// The receiving side: echoes each block (ping-pong) or answers each trial (stream).
pub struct NpServer {
    io: Io,
    out: Pattern,
    check: Checker,
    shared: Rc<Shared>,
    got: u64,
    sent: u64,
    owed: u64,
    closed: bool,
    /// In a bidirectional message of `bidir_len` bytes (send, then receive).
    in_bidir: bool,
    bidir_len: u64,
    bidir_done: u64,
}

/// A connected client/server pair sharing the block size.
pub fn pair(client: Io, server: Io, seed: u64, opts: Options) -> (NpClient, NpServer) {
    let shared = Rc::new(Shared { len: Cell::new(opts.start), ..Default::default() });
    let mut schedule = Schedule::new(opts.start, opts.upper, opts.perturbation);
    let first = schedule.next().unwrap_or(Step { bytes: opts.start, inc: 1 });
    let c = NpClient {
        io: client,
        out: Pattern::new(seed, 0),
        check: Checker::new(seed, 1),
        schedule,
        shared: shared.clone(),
        step: first,
        nrepeat: LATENCY_REPS,
        tlast: 0.0,
        best: f64::INFINITY,
        phase: Phase::Latency { i: 0, t0: Time::ZERO },
        wrote: 0,
        read: 0,
        sent: 0,
        closed: false,
        points: Vec::new(),
        opts,
    };
    let s = NpServer {
        io: server,
        out: Pattern::new(seed, 1),
        check: Checker::new(seed, 0),
        shared,
        got: 0,
        sent: 0,
        owed: 0,
        closed: false,
        in_bidir: false,
        bidir_len: 0,
        bidir_done: 0,
    };
    (c, s)
}

impl NpClient {
    fn streaming(&self) -> bool {
        self.opts.stream && !matches!(self.phase, Phase::Latency { .. })
    }

    /// `nrepeat` for the current step from `tlast`.
    fn repeats(&self) -> u64 {
        let b = self.step.bytes as f64;
        let per = b / (b - self.step.inc as f64 + 1.0) * self.tlast;
        let n = if per > 0.0 { (self.opts.run_time.as_secs_f64() / per) as u64 } else { u64::MAX };
        n.max(self.opts.trials)
    }

    /// The next socket call.
    pub fn next_op(&mut self, now: Time, host: &mut Host) -> Option<Op> {
        if self.closed || self.io.tcp().is_some_and(|s| !host.sockets.get::<tcp::Socket>(s).may_send()) {
            return None;
        }
        if matches!(self.phase, Phase::Finished) {
            // UDP has nothing to close.
            self.closed = self.io.tcp().is_none();
            return self.io.tcp().map(|sock| Op::Close { sock });
        }
        let len = self.shared.len.get();
        // Start of a message (and of a trial): remember when.
        if self.wrote == 0 && self.read == 0 {
            let stream = self.opts.stream;
            match &mut self.phase {
                Phase::Latency { i: 0, t0 } => *t0 = now,
                Phase::Trial { rep: 0, t0, .. } => {
                    *t0 = now;
                    if stream {
                        self.shared.stream_left.set(self.nrepeat);
                    }
                    if self.opts.bidir {
                        // Sync: the receiver starts its own nrepeat messages now.
                        let budget = &self.shared.bidir_budget;
                        budget.set(budget.get() + self.nrepeat);
                    }
                }
                _ => {}
            }
        }
        if let Phase::StreamAck { .. } = self.phase {
            return self.io.recv_op(host, 1 - self.read);
        }
        if self.wrote < len {
            return self.io.send_op(host, len - self.wrote);
        }
        if self.streaming() {
            return None;
        }
        self.io.recv_op(host, len - self.read)
    }

    /// Carry out a call chosen by [`NpClient::next_op`].
    pub fn perform(&mut self, op: Op, now: Time, host: &mut Host) -> Result<(), String> {
        match op {
            Op::Write { bytes, .. } | Op::SendTo { bytes, .. } => {
                self.io.write(host, &self.out, &mut self.sent, bytes)?;
                self.wrote += bytes;
                if self.streaming() && self.wrote == self.shared.len.get() {
                    self.message_done(now);
                }
            }
            Op::Read { bytes, .. } | Op::RecvFrom { bytes, .. } => {
                self.io.read(host, &mut self.check, bytes)?;
                self.read += bytes;
                let expect = if matches!(self.phase, Phase::StreamAck { .. }) { 1 } else { self.shared.len.get() };
                if self.read == expect {
                    self.message_done(now);
                }
            }
            Op::Close { sock } => {
                host.sockets.get_mut::<tcp::Socket>(sock).close();
                self.closed = true;
            }
            Op::Connect { .. } | Op::ViaSend { .. } | Op::ViaRecv { .. } => unreachable!("NetPIPE makes no {op:?}"),
        }
        Ok(())
    }

    /// A message (or a stream trial's answer) completed at `now`.
    fn message_done(&mut self, now: Time) {
        self.wrote = 0;
        self.read = 0;
        match self.phase {
            Phase::Latency { i, t0 } if i + 1 < LATENCY_REPS => self.phase = Phase::Latency { i: i + 1, t0 },
            Phase::Latency { t0, .. } => {
                self.tlast = now.since(t0).as_secs_f64() / (2 * LATENCY_REPS) as f64;
                self.begin_step();
            }
            Phase::Trial { trial, rep, t0 } if rep + 1 < self.nrepeat => {
                self.phase = Phase::Trial { trial, rep: rep + 1, t0 };
            }
            Phase::Trial { trial, t0, .. } if self.opts.stream => self.phase = Phase::StreamAck { trial, t0 },
            Phase::Trial { trial, t0, .. } | Phase::StreamAck { trial, t0 } => {
                let per_message = now.since(t0).as_secs_f64() / self.nrepeat as f64;
                // Ping-pong halves the round trip; stream and bidirectional do not.
                let t = if self.opts.stream || self.opts.bidir { per_message } else { per_message / 2.0 };
                self.best = self.best.min(t);
                if trial + 1 < self.opts.trials {
                    self.phase = Phase::Trial { trial: trial + 1, rep: 0, t0: now };
                } else {
                    self.finish_step();
                }
            }
            Phase::Finished => {}
        }
    }

    /// Start the trials of the current step.
    fn begin_step(&mut self) {
        self.shared.len.set(self.step.bytes);
        self.nrepeat = self.repeats();
        self.best = f64::INFINITY;
        self.phase = Phase::Trial { trial: 0, rep: 0, t0: Time::ZERO };
    }

    /// Record the current step and move to the next, or finish.
    fn finish_step(&mut self) {
        // NetPIPE counts the bytes moved both ways in bidirectional mode.
        let bytes = self.step.bytes * if self.opts.bidir { 2 } else { 1 };
        self.points.push(NetpipePoint {
            bytes,
            nrepeat: self.nrepeat,
            time_s: self.best,
            mbps: bytes as f64 * 8.0 / self.best / (1024.0 * 1024.0),
        });
        self.tlast = self.best;
        let stop = self.tlast >= self.opts.stop_time.as_secs_f64() || self.points.len() >= NSAMP - 3;
        match self.schedule.next() {
            Some(step) if !stop => {
                self.step = step;
                self.begin_step();
            }
            _ => self.phase = Phase::Finished,
        }
    }

    /// The stream this end received and checked.
    pub fn check_report(&self, from: &str, to: &str) -> super::FlowReport {
        self.check.report(from, to)
    }

    /// Block sizes measured, and in all when `upper` bounds the schedule.
    pub fn progress(&self) -> (u64, Option<u64>) {
        let total = (self.opts.upper < u64::MAX).then(|| {
            let sizes = Schedule::new(self.opts.start, self.opts.upper, self.opts.perturbation).take(NSAMP - 3).count();
            sizes as u64
        });
        (self.points.len() as u64, total)
    }

    /// Whether the schedule is done.
    pub fn is_done(&self) -> bool {
        matches!(self.phase, Phase::Finished)
    }
}

impl NpServer {
    /// The stream this end received and checked.
    pub fn check_report(&self, from: &str, to: &str) -> super::FlowReport {
        self.check.report(from, to)
    }

    /// The next socket call.
    pub fn next_op(&mut self, _now: Time, host: &mut Host) -> Option<Op> {
        if self.closed {
            return None;
        }
        let idle = !self.in_bidir && self.owed == 0 && self.got == 0;
        if idle && self.shared.bidir_budget.get() > self.bidir_done {
            // A bidirectional message: send our block, then receive theirs.
            self.in_bidir = true;
            self.bidir_len = self.shared.len.get();
            self.owed = self.bidir_len;
        }
        if self.owed > 0 {
            return self.io.send_op(host, self.owed);
        }
        if self.in_bidir {
            return self.io.recv_op(host, self.bidir_len - self.got);
        }
        let want = self.shared.len.get() - self.got;
        if let Some(op) = self.io.recv_op(host, want) {
            return Some(op);
        }
        let sock = host.sockets.get::<tcp::Socket>(self.io.tcp()?);
        let peer_closed = !sock.may_recv() && sock.state() == tcp::State::CloseWait;
        peer_closed.then_some(Op::Close { sock: self.io.tcp()? })
    }

    /// Carry out a call chosen by [`NpServer::next_op`].
    pub fn perform(&mut self, op: Op, host: &mut Host) -> Result<(), String> {
        match op {
            Op::Read { bytes, .. } | Op::RecvFrom { bytes, .. } if self.in_bidir => {
                self.io.read(host, &mut self.check, bytes)?;
                self.got += bytes;
                if self.got == self.bidir_len {
                    (self.got, self.in_bidir) = (0, false);
                    self.bidir_done += 1;
                }
            }
            Op::Read { bytes, .. } | Op::RecvFrom { bytes, .. } => {
                self.io.read(host, &mut self.check, bytes)?;
                self.got += bytes;
                if self.got == self.shared.len.get() {
                    self.got = 0;
                    match self.shared.stream_left.get() {
                        // Ping-pong: echo the block.
                        0 => self.owed = self.shared.len.get(),
                        // Last block of a stream trial: answer one byte.
                        1 => {
                            self.owed = 1;
                            self.shared.stream_left.set(0);
                        }
                        left => self.shared.stream_left.set(left - 1),
                    }
                }
            }
            Op::Write { bytes, .. } | Op::SendTo { bytes, .. } => {
                self.io.write(host, &self.out, &mut self.sent, bytes)?;
                self.owed -= bytes;
            }
            Op::Close { sock } => {
                host.sockets.get_mut::<tcp::Socket>(sock).close();
                self.closed = true;
            }
            Op::Connect { .. } | Op::ViaSend { .. } | Op::ViaRecv { .. } => unreachable!("NetPIPE makes no {op:?}"),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizes(start: u64, upper: u64, p: u64) -> Vec<u64> {
        Schedule::new(start, upper, p).map(|s| s.bytes).collect()
    }

    /// Derived by hand from the algorithm in NetPIPE.c (see the module doc):
    /// inc doubles at nq = 3, 5, 7, ...; perturbation starts once inc = 8 > p + 1.
    #[test]
    fn default_schedule_matches_netpipe() {
        let expected = [
            1, 2, 3, 4, 6, 8, 12, 13, 16, 19, 21, 24, 27, 29, 32, 35, 45, 48, 51, 61, 64, 67, 93, 96, 99, 125, 128,
            131, 189, 192, 195, 253, 256, 259,
        ];
        assert_eq!(sizes(1, 259, 3), expected);
    }

    #[test]
    fn no_perturbation_gives_powers_of_two_and_one_and_a_half() {
        assert_eq!(sizes(1, 200, 0), [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192]);
    }

    #[test]
    fn lower_and_upper_bounds() {
        // start 32: inc = 16, nq = 1; doubling at nq = 3, 5, ...
        // len 32 (nq 1, inc 16) → 29 32 35; 48 (nq 2) → 45 48 51; 64 (nq 3, inc 32) → 61 64 67;
        // 96 (nq 4) → 93 96 99; 128 (nq 5, inc 64) → 125 128 131; 192 → stop past 150.
        assert_eq!(sizes(32, 150, 3), [29, 32, 35, 45, 48, 51, 61, 64, 67, 93, 96, 99, 125, 128, 131]);
        assert_eq!(sizes(32, 150, 0), [32, 48, 64, 96, 128]);
    }

    #[test]
    fn increments_travel_with_their_sizes() {
        let steps: Vec<Step> = Schedule::new(1, 16, 3).collect();
        assert_eq!(steps.iter().find(|s| s.bytes == 6).unwrap().inc, 2);
        assert_eq!(steps.iter().find(|s| s.bytes == 13).unwrap().inc, 8);
    }
}
