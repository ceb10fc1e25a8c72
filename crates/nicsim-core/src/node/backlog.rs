//! Linux's socket backlog on a timed host (`cpu.socket_backlog`): a TCP
//! segment that arrives while the application is in a read or write call,
//! which holds the socket lock, is queued (`tcp_add_backlog`); when the call
//! releases the lock (`release_sock`), the application's core runs TCP
//! input for everything queued, and only then is its next call free to
//! start. Segments that find the socket free get TCP input in the softirq,
//! after the driver, device and IP work of their frame. Either way the
//! socket sees segments in the order the softirq handed them over (the
//! softirq's own spinlock orders them in Linux). Without the backlog, TCP
//! input is part of each frame's receive job.
//!
//! With `cpu.backlog_coalesce` (Linux 5.0 and later) a queued segment that
//! continues the backlog's last one joins it (`tcp_add_backlog`): same
//! flow, next in sequence, both ACKs, neither SYN, RST nor URG, the same
//! ECN bits, DSCP and TCP options, and room in the sk_buff
//! (`skb_try_coalesce`: at most `MAX_SKB_FRAGS` page fragments, no GRO
//! chain). The joined segment is one TCP input on the application's core;
//! the softirq frees the joining sk_buff (`kfree_skb_partial`).
//!
//! With `cpu.receive_queue_coalesce` (Linux 3.5 and later) a data segment
//! TCP queues in order behind unread data joins the receive queue's last
//! sk_buff the same way (`tcp_queue_rcv` → `tcp_try_coalesce`): the core
//! that ran its TCP input frees the joining sk_buff, and the read frees one
//! sk_buff for the joined segments.

use super::cost::{
    backlog_queue_pieces, copy_pieces, head_lines, push_nonzero, rx_footprint, shape, skb_frags, tcp_input_pieces,
    whole_pages, Frag, STACK_LINES_PER_FRAME,
};
use super::join::{joined_frags, Joining};
use super::timed::{Ctx, Next, Timed, Waiting};
use super::Env;
use crate::engine::Time;
use crate::host::cpu::{Class, Job, Layer, Path};
use crate::host::{segment_socket, SocketKey};
use crate::nic::offload::merge::{parse_with, Kind};
use crate::workload::Op;
use smoltcp::wire::IpProtocol;

impl Timed {
    /// TCP input of segment `w` is done: hand it, and whatever of its
    /// socket waited behind it, to smoltcp in arrival order.
    /// `ctx` ran the TCP input.
    pub(super) fn tcp_input_done(
        &mut self,
        env: &mut Env,
        w: Waiting,
        ctx: Ctx,
        now: Time,
    ) -> Result<(), crate::Error> {
        let sock = socket_of(&w.1);
        self.done.insert((sock, w.0), (w.1, w.2));
        loop {
            let t = &mut *self;
            let next = t.order.entry(sock).or_default();
            let Some((frame, segments)) = t.done.remove(&(sock, next.1)) else { return Ok(()) };
            next.1 += 1;
            self.rx_to_stack(env, frame, segments, ctx, now)?;
        }
    }

    /// Number TCP segment `frame` in its socket's arrival order.
    fn arrival(&mut self, frame: &[u8]) -> u64 {
        let next = self.order.entry(socket_of(frame)).or_default();
        next.0 += 1;
        next.0 - 1
    }

    /// The receive work of `frame` (`segments` merged) is done.
    pub(super) fn rx_delivered(
        &mut self,
        env: &mut Env,
        frame: Vec<u8>,
        segments: u32,
        now: Time,
    ) -> Result<(), crate::Error> {
        let t = &mut *self;
        let sh = shape(&frame);
        if !t.timing.cpu.socket_backlog || sh.proto != Some(IpProtocol::Tcp) || sh.frag != Frag::Whole {
            let ctx = self.irq_ctx();
            self.rx_to_stack(env, frame, segments, ctx, now)?;
            self.timed_poll(env, now, ctx, true);
            return Ok(());
        }
        let core = t.timing.stack_core();
        if waits_for_owner(t.owned, &frame) {
            // `tcp_v4_rcv` finds the socket owned: under `bh_lock_sock` it
            // queues the segment (`tcp_add_backlog`) for the owner's core.
            let mut pieces = backlog_queue_pieces(&t.timing, core);
            let data = sh.data > 0;
            if self.add_backlog(frame, segments, env.host.dev.skips_rx_checksums()) {
                // It joined the last one: the softirq frees its sk_buff.
                pieces.extend(join_pieces(&self.timing, core, data));
            }
            if !pieces.is_empty() {
                let msg = env.app.current_msg();
                let job = Job::new(Class::Softirq, pieces, Next::Charged).for_msg(msg).on(Path::Receive);
                self.submit(env, core, now, job);
            }
            return Ok(());
        }
        let id = t.arrival(&frame);
        let pieces = tcp_input_pieces(&t.timing, sh, core, false);
        let msg = env.app.current_msg();
        let job = Job::new(Class::Softirq, pieces, Next::RxStack(id, frame, segments)).for_msg(msg).on(Path::Receive);
        self.submit(env, core, now, job);
        Ok(())
    }

    /// Queue `frame` (`segments` wire frames) to the socket's backlog.
    /// Returns true when it joined the last segment there.
    fn add_backlog(&mut self, frame: Vec<u8>, segments: u32, trusted: bool) -> bool {
        let t = &mut *self;
        t.lock_stats.backlogged += 1;
        let parsed = t.timing.cpu.backlog_coalesce.then(|| parse_with(&frame, trusted)).and_then(|k| match k {
            Kind::Tcp(v) => Some(v),
            _ => None,
        });
        if let (Some(v), Some(j)) = (&parsed, &mut t.joining) {
            if j.join(&frame, v, segments) {
                return true;
            }
        }
        t.close_backlog_tail();
        let id = t.arrival(&frame);
        match parsed {
            Some(v) => match Joining::start(id, frame, &v, segments) {
                Ok(j) => t.joining = Some(j),
                Err(frame) => t.backlog.push((id, frame, segments)),
            },
            None => t.backlog.push((id, frame, segments)),
        }
        false
    }

    /// The backlog's last segment takes no more.
    fn close_backlog_tail(&mut self) {
        if let Some(j) = self.joining.take() {
            self.backlog.push(j.finish());
        }
    }

    /// Hand a received frame to the host's stack (taken at its next poll);
    /// `ctx` ran its TCP input.
    pub(super) fn rx_to_stack(
        &mut self,
        env: &mut Env,
        frame: Vec<u8>,
        segments: u32,
        ctx: Ctx,
        now: Time,
    ) -> Result<(), crate::Error> {
        env.note_deliver(frame.len(), now);
        let c = &self.timing.costs;
        if (c.skb_free.total(1) > 0 || c.page_free.total(1) > 0 || c.skb_slab.total(1) > 0) && shape(&frame).data > 0 {
            // The read that consumes it frees its sk_buff and buffers,
            // unless it joined the receive queue's last one.
            if self.rcvq_join(&frame, segments, env.host.dev.skips_rx_checksums()) {
                let pieces = join_pieces(&self.timing, ctx.core, true);
                let msg = env.app.current_msg();
                let job = Job::new(ctx.class, pieces, Next::Charged).for_msg(msg).on(Path::Receive);
                self.submit(env, ctx.core, now, job);
            } else {
                self.unread.0 += 1;
            }
            let t = &mut *self;
            let bytes = rx_footprint(t.timing.nic.striding_rq, env.host.max_frame(), frame.len() as u64, segments);
            t.unread.1 += whole_pages(&mut t.rx_pages.1, bytes);
        }
        if self.timing.costs.copy_call.total(1) > 0 && shape(&frame).data > 0 {
            self.unread_pieces += copy_pieces(frame.len() as u64, segments);
        }
        self.free_acked(env, &frame, ctx, now);
        let t = &mut *self;
        let l2 = t.timing.cpu.l2_cache.0;
        let data = shape(&frame).data;
        if l2 > 0 && data > 0 && t.timing.line_transfer() > 0 {
            let lines = head_lines(frame.len() as u64, segments);
            t.unread_lines += lines;
            // Frames back the stack core's cache reaches, in payload bytes.
            let frames = l2 / ((lines / u64::from(segments.max(1)) + STACK_LINES_PER_FRAME) * 64);
            t.stack_reach = frames * data / u64::from(segments.max(1));
        }
        if crate::workload::via::is_via(&frame) {
            env.via_deliver(&frame, now)?;
        } else {
            env.host.receive(frame, segments);
        }
        Ok(())
    }

    /// TCP input of `frame` on `ctx` frees the sent sk_buffs its ACK
    /// covers and the send fragment pages they held (`rtx.rs`). Per
    /// sk_buff the release of the original (`skb_free`); the descriptor
    /// clean-up already priced the release of the clone the driver sent
    /// and, for the pair, the slab object and the head (`skb_slab`,
    /// `page_free`), which Linux frees here. Per 32 KiB page its return to
    /// the buddy allocator, priced as its allocation (`page_frag`: the free
    /// merges the buddies the allocation split), and the zone lock the free
    /// takes (`zone_lock`).
    fn free_acked(&mut self, env: &mut Env, frame: &[u8], ctx: Ctx, now: Time) {
        let (skbs, pages) = self.rtx.acked(frame);
        if skbs == 0 && pages == 0 {
            return;
        }
        let zone = super::timed::zone_lock(&mut self.zone_core, &self.timing, ctx.core, pages);
        let (c, cy) = (&self.timing.costs, |cost| self.timing.cycles_on(ctx.core, cost));
        let mut pieces = Vec::with_capacity(3);
        push_nonzero(&mut pieces, Layer::Skb, skbs * cy(c.skb_free));
        push_nonzero(&mut pieces, Layer::Mm, pages * cy(c.page_frag));
        push_nonzero(&mut pieces, Layer::Lock, zone);
        if !pieces.is_empty() {
            let msg = env.app.current_msg();
            let job = Job::new(ctx.class, pieces, Next::Charged).for_msg(msg).on(Path::Send);
            self.submit(env, ctx.core, now, job);
        }
    }

    /// `cpu.receive_queue_coalesce`: does data segment `frame` (`segments`
    /// wire frames) join the receive queue's last unread sk_buff
    /// (`tcp_try_coalesce`)? It must continue it, and the sk_buff must have
    /// room for its head and fragments. Either way it becomes the tail of its
    /// socket's queue; other sockets' queues keep theirs.
    fn rcvq_join(&mut self, frame: &[u8], segments: u32, trusted: bool) -> bool {
        if !self.timing.cpu.receive_queue_coalesce {
            return false;
        }
        let Kind::Tcp(v) = parse_with(frame, trusted) else {
            return false;
        };
        let sock = (v.key.src.octets(), v.key.sport, v.key.dport);
        let end = v.seq.wrapping_add(v.len() as u32);
        let frags = skb_frags(frame.len() as u64, segments);
        let joined = match (self.rcvq_tail.get(&sock), frags) {
            (Some(&(seq, tail)), Some(f)) if seq == v.seq => joined_frags(tail, f),
            _ => None,
        };
        match (joined, frags) {
            (Some(n), _) => self.rcvq_tail.insert(sock, (end, n)),
            (None, Some(f)) => self.rcvq_tail.insert(sock, (end, f)),
            (None, None) => self.rcvq_tail.remove(&sock),
        };
        joined.is_some()
    }

    /// The application's call `op` is over: release the socket. Returns
    /// true when segments waited in the backlog: the call then goes on with
    /// their TCP input on the application's core.
    pub(super) fn release_sock(&mut self, env: &mut Env, op: Op, now: Time) -> bool {
        let t = &mut *self;
        if t.owned.is_none() {
            return false;
        }
        t.close_backlog_tail();
        if t.backlog.is_empty() {
            t.owned = None;
            return false;
        }
        let frames = std::mem::take(&mut t.backlog);
        let core = t.timing.cpu.app_core as usize;
        let pieces: Vec<_> =
            frames.iter().flat_map(|(_, f, _)| tcp_input_pieces(&t.timing, shape(f), core, true)).collect();
        let msg = env.app.current_msg();
        let job = Job::new(Class::Task, pieces, Next::Backlog(frames, op)).for_msg(msg).on(Path::Receive);
        self.submit(env, core, now, job);
        true
    }

    /// The application's core processed the backlog `frames` of call `op`.
    pub(super) fn on_backlog_done(
        &mut self,
        env: &mut Env,
        frames: Vec<Waiting>,
        op: Op,
        now: Time,
    ) -> Result<(), crate::Error> {
        let core = self.timing.cpu.app_core as usize;
        for w in frames {
            self.tcp_input_done(env, w, Ctx::task(core), now)?;
            // TCP input answers each segment as it goes (an ACK every
            // second segment), here on the application's core.
            self.timed_poll(env, now, Ctx::task(core), false);
        }
        if self.release_sock(env, op, now) {
            // More came meanwhile: it is processed before the lock is free.
            return Ok(());
        }
        if !self.read_goes_on(env, op, now) {
            self.after_call(env, op, now);
        }
        Ok(())
    }
}

/// The socket TCP segment `frame` is for (one key for any frame that is
/// not a whole TCP/IPv4 segment, which the backlog never sees).
fn socket_of(frame: &[u8]) -> SocketKey {
    segment_socket(frame).unwrap_or_default()
}

/// Whether received `frame` waits in the backlog while the application's
/// call holds the lock of socket `owned`: only a segment for that socket
/// does (`tcp_v4_rcv` looks the socket up, then `sock_owned_by_user`);
/// another socket's segment gets its TCP input in the softirq.
pub(super) fn waits_for_owner(owned: Option<SocketKey>, frame: &[u8]) -> bool {
    owned.is_some() && owned == segment_socket(frame)
}

/// A segment joining another's sk_buff on `core`: the join (`gro_rx`) and
/// the free of the joining sk_buff (`kfree_skb_partial`): its slab object,
/// and the head too for a segment without data (a data head became a
/// fragment). A data segment's join is `skb_try_coalesce` appending its
/// head and fragments (layer `skb`); a pure ACK has nothing to append, and
/// its join is the header comparisons of `tcp_add_backlog` (layer `tcp`).
fn join_pieces(timing: &crate::host::timing::Timing, core: usize, data: bool) -> Vec<(Layer, u64)> {
    let (c, cy) = (&timing.costs, |cost| timing.cycles_on(core, cost));
    let mut pieces = Vec::with_capacity(3);
    push_nonzero(&mut pieces, if data { Layer::Skb } else { Layer::Tcp }, cy(c.gro_rx));
    push_nonzero(&mut pieces, Layer::Skb, cy(c.skb_free));
    let head = if data { 0 } else { cy(c.page_free) };
    push_nonzero(&mut pieces, Layer::Mm, cy(c.skb_slab) + head);
    pieces
}

#[cfg(test)]
mod tests {
    use super::waits_for_owner;
    use crate::host::sends;
    use crate::testing::TcpFrame;
    use smoltcp::wire::Ipv4Address;

    #[test]
    fn only_a_segment_for_the_socket_whose_lock_the_call_holds_waits_in_the_backlog() {
        // The receiver's socket 10.0.0.2:5001 talks to 10.0.0.1:49152 (the
        // fixture frame's flow).
        let sock = ([10, 0, 0, 1], 49152, 5001);
        let owned = Some(sock);
        let frame = |f: TcpFrame| f.build();
        let own = frame(TcpFrame { payload: b"data", ..TcpFrame::default() });
        assert!(waits_for_owner(owned, &own));
        // A pure ACK for the same socket waits too.
        assert!(waits_for_owner(owned, &frame(TcpFrame { ack: Some(1), ..TcpFrame::default() })));
        // The same ports on another peer, another peer port, another local port.
        let other_peer = frame(TcpFrame { src: Ipv4Address::new(10, 0, 0, 3), ..TcpFrame::default() });
        assert!(!waits_for_owner(owned, &other_peer));
        assert!(!waits_for_owner(owned, &frame(TcpFrame { src_port: 49153, ..TcpFrame::default() })));
        assert!(!waits_for_owner(owned, &frame(TcpFrame { dst_port: 5002, ..TcpFrame::default() })));
        // No call holds a socket; not a TCP segment.
        assert!(!waits_for_owner(None, &own));
        assert!(!waits_for_owner(owned, &own[..20]));
        // What the socket sends goes the other way: from 10.0.0.2:5001 to 10.0.0.1:49152.
        let reply = |f: TcpFrame| crate::probe::wire::TcpView::parse(&f.build()).expect("a segment").flow;
        let back =
            TcpFrame { src: Ipv4Address::new(10, 0, 0, 2), dst: Ipv4Address::new(10, 0, 0, 1), ..TcpFrame::default() };
        assert!(sends(sock, &reply(TcpFrame { src_port: 5001, dst_port: 49152, ..back })));
        assert!(!sends(sock, &reply(TcpFrame { src_port: 5001, dst_port: 49153, ..back })));
        assert!(!sends(sock, &reply(TcpFrame { src_port: 5002, dst_port: 49152, ..back })));
        // The received segment's own flow is not one the socket sends.
        assert!(!sends(sock, &reply(TcpFrame::default())));
    }
}
