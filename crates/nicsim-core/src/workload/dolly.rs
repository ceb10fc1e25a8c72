//! Dolly's multi-drop chain (Kurmann, Rauch and Stricker): a disk image
//! streams from the first node down a chain of TCP connections; every other
//! node reads it from its upstream connection, writes it to its disk and
//! forwards it downstream. The first node is a bulk sender and the last a
//! bulk receiver with a disk; the nodes between run a [`Relay`].
//!
//! A relay works like Dolly's single loop: it reads a chunk (at most
//! `chunk` bytes), starts writing it to the disk, forwards it downstream,
//! and reads the next chunk only when the disk has finished the previous
//! one and the chunk has been handed to the downstream socket. Every byte
//! read is checked against the image's pattern, so each node proves it
//! received the image intact.

use smoltcp::iface::SocketHandle;
use smoltcp::socket::tcp;

use super::pattern::Pattern;
use super::{read_exact, room, write_exact, Checker, Op};
use crate::engine::units::Bandwidth;
use crate::engine::{Dur, Time};
use crate::host::Host;

/// A node between the first and the last: receives, stores, forwards.
pub struct Relay {
    /// Upstream host's index.
    pub(super) from: usize,
    up: SocketHandle,
    down: SocketHandle,
    pub(super) check: Checker,
    image: Pattern,
    total: u64,
    chunk: u64,
    forwarded: u64,
    disk: Option<Bandwidth>,
    disk_busy_until: Option<Time>,
    closed: bool,
}

impl Relay {
    pub(super) fn new(
        from: usize,
        (up, down): (SocketHandle, SocketHandle),
        seed: u64,
        total: u64,
        chunk: u64,
        disk: Option<Bandwidth>,
    ) -> Relay {
        Relay {
            from,
            up,
            down,
            check: Checker::new(seed, 0),
            image: Pattern::new(seed, 0),
            total,
            chunk,
            forwarded: 0,
            disk,
            disk_busy_until: None,
            closed: false,
        }
    }

    pub(super) fn next_op(&mut self, now: Time, host: &mut Host) -> Option<Op> {
        if self.closed {
            return None;
        }
        let received = self.check.received;
        if self.forwarded < received {
            let n = (received - self.forwarded).min(room(host.sockets.get::<tcp::Socket>(self.down)));
            return (n > 0).then_some(Op::Write { sock: self.down, bytes: n });
        }
        if self.disk_busy_until.is_some_and(|t| now < t) {
            return None;
        }
        if received == self.total {
            let down = host.sockets.get::<tcp::Socket>(self.down);
            return down.may_send().then_some(Op::Close { sock: self.down });
        }
        let up = host.sockets.get::<tcp::Socket>(self.up);
        let n = (up.recv_queue() as u64).min(self.chunk).min(self.total - received);
        (n > 0).then_some(Op::Read { sock: self.up, bytes: n })
    }

    pub(super) fn perform(&mut self, op: Op, now: Time, host: &mut Host) -> Result<(), String> {
        match op {
            Op::Read { bytes, .. } => {
                read_exact(host.sockets.get_mut::<tcp::Socket>(self.up), &mut self.check, bytes)?;
                if let Some(rate) = self.disk {
                    self.disk_busy_until = Some(now + Dur(rate.ps_for_bits(bytes * 8).0));
                }
                Ok(())
            }
            Op::Write { bytes, .. } => {
                write_exact(host.sockets.get_mut::<tcp::Socket>(self.down), &self.image, &mut self.forwarded, bytes)
            }
            Op::Close { .. } => {
                host.sockets.get_mut::<tcp::Socket>(self.down).close();
                host.sockets.get_mut::<tcp::Socket>(self.up).close();
                self.closed = true;
                Ok(())
            }
            other => unreachable!("a relay makes only the calls it chose: {other:?}"),
        }
    }

    pub(super) fn wake_at(&self) -> Option<Time> {
        self.disk_busy_until
    }

    /// Done once the whole image is forwarded and stored.
    pub(super) fn is_done(&self) -> bool {
        self.closed
    }
}
