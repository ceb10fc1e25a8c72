//! Linux generic receive offload (GRO) in the host's NAPI poll, with the
//! rules of nicsim's reference semantics for coalescing
//! (`spec/dependencies.md`; Linux `net/ipv4/tcp_offload.c`,
//! `tcp_gro_receive`, and `inet_gro_receive`).
//!
//! A segment merges into the aggregate held for its flow only if: same
//! MACs, IPs and ports; IPv4 without options, not a fragment, valid
//! checksums, no flag but DF; same TTL, TOS and DF; IP ID equal to the last
//! one's plus one, or (DF set) equal to it; the TCP word of data offset,
//! flags and window identical to the first segment's but for CWR/FIN/PSH;
//! equal ACK number; identical options; sequence number right after the
//! held data; payload no longer than the first segment's. A segment for a
//! held flow that fails a test flushes the flow and is held afresh. PSH,
//! FIN, a short segment (shorter than the first) or an aggregate that
//! cannot take another full segment within 64 KB flush it after merging.
//! URG/RST/SYN/CWR segments, pure ACKs and frames GRO cannot use flush
//! their flow and go up unchanged. Up to `max_flows` flows are held (the
//! oldest is flushed to make room); `flush` ends a poll batch.

use serde::Serialize;

use super::{DriverBatch, RxCx, RxOffload};
use crate::host::cpu::Layer;
use crate::host::timing::{Cost, GroFlush, LroMode};

use super::merge::{
    emit, ip_reason, parse_with, pass, Aggregate, Coalesced, Coalescer, FlowKey, Kind, OutputStats, PassReason, PassReasons, TcpView,
    ETH, IP_MAX,
};

/// GRO's limits (defaults: Linux's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroConfig {
    /// Flows held at once (reference semantics: 64; Linux `MAX_GRO_SKBS` × buckets).
    pub max_flows: usize,
    /// Largest IP total length of an aggregate (Linux: 64 KB, `GRO_MAX_SIZE` 65536 exclusive).
    pub max_ip_len: usize,
    /// Frames come over an undamaging wire: their TCP checksums are taken
    /// as valid and aggregates leave theirs unfilled (see `merge::TcpView::trusted`).
    pub trusted: bool,
}

impl Default for GroConfig {
    fn default() -> Self {
        // spec/dependencies.md, "Reference semantics for coalescing":
        // up to 64 flows held, 64 KB aggregates.
        GroConfig { max_flows: 64, max_ip_len: IP_MAX, trusted: false }
    }
}

/// Aggregates handed up, by cause.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct GroFlushes {
    /// A PSH or FIN segment merged (or arrived with nothing held).
    pub psh_fin: u64,
    /// A segment shorter than the first merged.
    pub short: u64,
    /// The next segment would pass 64 KB.
    pub size_64k: u64,
    /// A segment of the flow failed a merge test and was held afresh
    /// (which test: [`GroStats::mismatches`]).
    pub mismatch: u64,
    /// A segment of the flow that never merges (flags, pure ACK, bad checksum, ...).
    pub not_mergeable: u64,
    /// The flow table was full: the oldest flow was flushed.
    pub flows_full: u64,
    /// The poll batch ended (`flush`).
    pub poll_end: u64,
}

/// What GRO did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct GroStats {
    /// Frames offered.
    pub frames_in: u64,
    /// Frames handed up.
    pub frames_out: u64,
    /// Bytes offered.
    pub bytes_in: u64,
    /// Bytes handed up.
    pub bytes_out: u64,
    /// Segments that went up inside a frame of two or more.
    pub segments_merged: u64,
    /// Frames of two or more segments handed up.
    pub aggregates: u64,
    /// Frames GRO did not hold (passed up unchanged).
    pub passthrough: u64,
    /// Frames passed through, by reason (they sum to `passthrough`).
    pub passed: PassReasons,
    /// Flows flushed, by cause.
    pub flushes: GroFlushes,
    /// Mismatch flushes, by the first merge test the segment failed.
    pub mismatches: GroMismatches,
    /// Most flows held at once.
    pub max_flows_held: usize,
}

/// The merge test a segment of a held flow failed (the first, in the order
/// below), so the flow was flushed and the segment held afresh.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct GroMismatches {
    /// Sequence number not right after the held data (loss, reordering, a
    /// retransmission).
    pub sequence: u64,
    /// Payload longer than the first segment's.
    pub longer: u64,
    /// A different ACK number.
    pub ack: u64,
    /// A different data offset, window, or flag other than CWR/FIN/PSH.
    pub flags_window: u64,
    /// Different TCP options (e.g. a new timestamp value).
    pub options: u64,
    /// A different TTL, TOS or DF, or an IP ID out of sequence.
    pub ip_header: u64,
}

impl GroStats {
    /// Add the counts of another GRO context's statistics (most flows held: the larger).
    pub fn absorb(&mut self, o: &GroStats) {
        for (a, b) in [
            (&mut self.frames_in, o.frames_in),
            (&mut self.frames_out, o.frames_out),
            (&mut self.bytes_in, o.bytes_in),
            (&mut self.bytes_out, o.bytes_out),
            (&mut self.segments_merged, o.segments_merged),
            (&mut self.aggregates, o.aggregates),
            (&mut self.passthrough, o.passthrough),
            (&mut self.flushes.psh_fin, o.flushes.psh_fin),
            (&mut self.flushes.short, o.flushes.short),
            (&mut self.flushes.size_64k, o.flushes.size_64k),
            (&mut self.flushes.mismatch, o.flushes.mismatch),
            (&mut self.flushes.not_mergeable, o.flushes.not_mergeable),
            (&mut self.flushes.flows_full, o.flushes.flows_full),
            (&mut self.flushes.poll_end, o.flushes.poll_end),
            (&mut self.mismatches.sequence, o.mismatches.sequence),
            (&mut self.mismatches.longer, o.mismatches.longer),
            (&mut self.mismatches.ack, o.mismatches.ack),
            (&mut self.mismatches.flags_window, o.mismatches.flags_window),
            (&mut self.mismatches.options, o.mismatches.options),
            (&mut self.mismatches.ip_header, o.mismatches.ip_header),
        ] {
            *a += b;
        }
        self.passed.absorb(&o.passed);
        self.max_flows_held = self.max_flows_held.max(o.max_flows_held);
    }
}

#[derive(Debug, Clone, Copy)]
enum Mismatch {
    Sequence,
    Longer,
    Ack,
    FlagsWindow,
    Options,
    IpHeader,
}

#[derive(Debug, Clone, Copy)]
enum Cause {
    PshFin,
    Short,
    Size64k,
    Mismatch,
    NotMergeable,
    FlowsFull,
    PollEnd,
}

/// A held flow: its aggregate and what the next segment must match.
#[derive(Debug)]
struct Flow {
    macs: [u8; 12],
    key: FlowKey,
    agg: Aggregate,
    /// The first segment's payload length (Linux's `gso_size`).
    mss: usize,
    ttl: u8,
    tos: u8,
    df: bool,
    last_id: u16,
    /// Data offset, flags (CWR, FIN, PSH cleared) and window of the first segment.
    word: u32,
    ack: u32,
    options: Vec<u8>,
}

/// Host GRO over one receive queue.
#[derive(Debug)]
pub struct Gro {
    cfg: GroConfig,
    /// Held flows, oldest first.
    flows: Vec<Flow>,
    stats: GroStats,
    arrivals: u64,
    scratch: Vec<(Coalesced, u64)>,
}

/// TCP flag bits GRO lets differ between merged segments.
/// In the word of TCP header bytes 12..16 (offset, flags, window), the flags
/// byte is the second: CWR 0x80, PSH 0x08, FIN 0x01.
const FLAGS_MAY_DIFFER: u32 = 0x0089_0000;

fn tcp_word(frame: &[u8], v: &TcpView) -> u32 {
    let at = ETH + v.ip_hlen + 12;
    let w = u32::from_be_bytes(frame[at..at + 4].try_into().expect("4 bytes"));
    w & !FLAGS_MAY_DIFFER
}

fn macs(frame: &[u8]) -> [u8; 12] {
    frame[..12].try_into().expect("an Ethernet header")
}

impl Gro {
    /// An empty GRO context.
    pub fn new(cfg: GroConfig) -> Self {
        Gro { cfg, flows: Vec::new(), stats: GroStats::default(), arrivals: 0, scratch: Vec::new() }
    }

    /// Segments currently held.
    pub fn held(&self) -> usize {
        self.flows.iter().map(|f| f.agg.segments as usize).sum()
    }

    /// What GRO did so far.
    pub fn stats(&self) -> &GroStats {
        &self.stats
    }

    /// [`Coalescer::flush_tagged`]: hand every held flow up.
    fn flush_all_tagged(&mut self, out: &mut Vec<(Coalesced, u64)>) {
        while !self.flows.is_empty() {
            self.flush_flow(0, Cause::PollEnd, out);
        }
    }

    /// [`Coalescer::push_tagged`]: each output carries the
    /// tag of its latest segment.
    fn offer_tagged(&mut self, frame: Vec<u8>, tag: u64, out: &mut Vec<(Coalesced, u64)>) -> bool {
        self.arrivals += 1;
        self.stats.frames_in += 1;
        self.stats.bytes_in += frame.len() as u64;
        let v = match parse_with(&frame, self.cfg.trusted) {
            Kind::Other(why) => {
                pass(&mut self.stats, why, frame, tag, out);
                return false;
            }
            Kind::LaterFragment(src, dst) => {
                while let Some(i) = self.flows.iter().position(|f| f.key.src == src && f.key.dst == dst) {
                    self.flush_flow(i, Cause::NotMergeable, out);
                }
                pass(&mut self.stats, PassReason::IpFragment, frame, tag, out);
                return false;
            }
            Kind::Tcp(v) => v,
        };
        let found = self.flows.iter().position(|f| f.key == v.key && f.macs == macs(&frame));
        let reject = ip_reason(&v).or_else(|| {
            if v.urg || v.rst || v.syn || v.cwr || !v.ack_flag {
                Some(PassReason::Flags)
            } else if v.len() == 0 {
                Some(PassReason::NoPayload)
            } else {
                None
            }
        });
        if let Some(why) = reject {
            if let Some(i) = found {
                self.flush_flow(i, Cause::NotMergeable, out);
            }
            pass(&mut self.stats, why, frame, tag, out);
            return false;
        }
        let order = self.arrivals;
        if let Some(i) = found {
            let failed = self.mismatch(&self.flows[i], &frame, &v);
            if let Some(test) = failed {
                *match test {
                    Mismatch::Sequence => &mut self.stats.mismatches.sequence,
                    Mismatch::Longer => &mut self.stats.mismatches.longer,
                    Mismatch::Ack => &mut self.stats.mismatches.ack,
                    Mismatch::FlagsWindow => &mut self.stats.mismatches.flags_window,
                    Mismatch::Options => &mut self.stats.mismatches.options,
                    Mismatch::IpHeader => &mut self.stats.mismatches.ip_header,
                } += 1;
            }
            if failed.is_none() {
                if self.flows[i].agg.ip_len_with(v.len()) > self.cfg.max_ip_len {
                    self.flush_flow(i, Cause::Size64k, out);
                } else {
                    let f = &mut self.flows[i];
                    f.agg.append(&frame, &v, 0, tag, order);
                    f.last_id = v.ident;
                    let mss = f.mss;
                    if v.psh || v.fin {
                        self.flush_flow(i, Cause::PshFin, out);
                    } else if v.len() < mss {
                        self.flush_flow(i, Cause::Short, out);
                    } else if self.flows[i].agg.ip_len_with(mss) > self.cfg.max_ip_len {
                        self.flush_flow(i, Cause::Size64k, out);
                    }
                    return true;
                }
            } else {
                self.flush_flow(i, Cause::Mismatch, out);
            }
        }
        if v.psh || v.fin {
            // Nothing to wait for: up at once.
            self.stats.flushes.psh_fin += 1;
            emit(&mut self.stats, Aggregate::start(frame, &v, 0, tag, order), out);
            return false;
        }
        if self.flows.len() >= self.cfg.max_flows.max(1) {
            self.flush_flow(0, Cause::FlowsFull, out);
        }
        self.flows.push(Flow {
            macs: macs(&frame),
            key: v.key,
            mss: v.len(),
            ttl: v.ttl,
            tos: v.tos,
            df: v.df,
            last_id: v.ident,
            word: tcp_word(&frame, &v),
            ack: v.ack,
            options: v.options(&frame).to_vec(),
            agg: Aggregate::start(frame, &v, 0, tag, order),
        });
        self.stats.max_flows_held = self.stats.max_flows_held.max(self.flows.len());
        true
    }

    /// The first merge test segment `v` fails for `f`'s aggregate, if any.
    fn mismatch(&self, f: &Flow, frame: &[u8], v: &TcpView) -> Option<Mismatch> {
        let next_id = f.last_id.wrapping_add(1);
        let id_ok = v.ident == next_id || (v.df && v.ident == f.last_id);
        if v.seq != f.agg.end_seq() {
            Some(Mismatch::Sequence)
        } else if v.len() > f.mss {
            Some(Mismatch::Longer)
        } else if v.ack != f.ack {
            Some(Mismatch::Ack)
        } else if tcp_word(frame, v) != f.word {
            Some(Mismatch::FlagsWindow)
        } else if v.options(frame) != f.options.as_slice() {
            Some(Mismatch::Options)
        } else if !(v.ttl == f.ttl && v.tos == f.tos && v.df == f.df && id_ok) {
            Some(Mismatch::IpHeader)
        } else {
            None
        }
    }

    fn flush_flow(&mut self, i: usize, cause: Cause, out: &mut Vec<(Coalesced, u64)>) {
        let flow = self.flows.remove(i);
        let f = &mut self.stats.flushes;
        *match cause {
            Cause::PshFin => &mut f.psh_fin,
            Cause::Short => &mut f.short,
            Cause::Size64k => &mut f.size_64k,
            Cause::Mismatch => &mut f.mismatch,
            Cause::NotMergeable => &mut f.not_mergeable,
            Cause::FlowsFull => &mut f.flows_full,
            Cause::PollEnd => &mut f.poll_end,
        } += 1;
        emit(&mut self.stats, flow.agg, out);
    }
}

impl OutputStats for GroStats {
    fn output(&mut self) -> [&mut u64; 5] {
        [
            &mut self.frames_out,
            &mut self.bytes_out,
            &mut self.passthrough,
            &mut self.aggregates,
            &mut self.segments_merged,
        ]
    }

    fn reasons(&mut self) -> &mut PassReasons {
        &mut self.passed
    }
}

/// GRO or software LRO in the driver, as a receive offload: each frame of a
/// NAPI batch costs the driver and the coalescer; the batch is flushed at
/// its end; each merged frame then climbs the stack once.
#[derive(Debug)]
pub struct HostCoalescer {
    gro: Gro,
    /// Per received frame, on the stack core.
    cost: Cost,
    /// A batch that used the whole NAPI budget keeps what it holds (Linux
    /// 5.4 flushes GRO in `napi_complete_done`); else every batch flushes.
    keep_on_full: Option<u32>,
}

impl HostCoalescer {
    /// The coalescer a host with `timing` runs, if `nic.lro` is `gro` or `software`.
    pub fn from_host(host: &super::Setup) -> Option<HostCoalescer> {
        let timing = host.timing;
        let cost = match timing.nic.lro {
            LroMode::Gro => timing.costs.gro_rx,
            // Linux's inet_lro merged by the same rules GRO later took over
            // (in-order, same headers, flushed at the end of the NAPI poll);
            // it differs in what it costs.
            LroMode::Software => timing.costs.lro_rx,
            LroMode::Off | LroMode::Nic => return None,
        };
        let keep_on_full = (timing.nic.gro_flush == GroFlush::NapiComplete).then_some(timing.nic.napi_budget);
        let cfg = GroConfig { trusted: host.trusted, ..GroConfig::default() };
        Some(HostCoalescer { gro: Gro::new(cfg), cost, keep_on_full })
    }
}

impl RxOffload for HostCoalescer {
    /// Work on frames merged away after the batch's last merged frame goes
    /// to the batch's closing job.
    fn driver_batch(&mut self, cx: &mut RxCx, batch: &mut DriverBatch) {
        let core = batch.core;
        let mut per_frame = cx.timing.rx_frame_pieces(core);
        per_frame.push((Layer::Coalesce, cx.timing.cycles_on(core, self.cost)));
        let mut pending: Vec<(Layer, u64)> = Vec::new();
        let mut out = Vec::new();
        let frames = std::mem::take(&mut batch.frames);
        let n = frames.len();
        let flush = self.keep_on_full.is_none_or(|budget| n < budget as usize);
        let skb_free = cx.timing.cycles_on(core, cx.timing.costs.skb_free);
        let skb_slab = cx.timing.cycles_on(core, cx.timing.costs.skb_slab);
        let deliver = |out: &mut Vec<Coalesced>, pending: &mut Vec<(Layer, u64)>, batch: &mut DriverBatch| {
            for merged in out.drain(..) {
                let mut pieces = std::mem::take(pending);
                let stack = (cx.rx_cost)(&merged.frame, core).pieces;
                // The per-frame pieces were paid frame by frame above.
                let per_frame_layer = |l: &Layer| matches!(l, Layer::Driver | Layer::Clock | Layer::ClockRead);
                pieces.extend(stack.into_iter().filter(|(l, _)| !per_frame_layer(l)));
                // GRO frees the head of every frame it merged into another.
                let freed = skb_free * u64::from(merged.segments - 1);
                if freed > 0 {
                    pieces.push((Layer::Skb, freed));
                }
                let slab = skb_slab * u64::from(merged.segments - 1);
                if slab > 0 {
                    pieces.push((Layer::Mm, slab));
                }
                batch.deliver(pieces, merged.frame, merged.segments);
            }
        };
        if n == 0 && flush {
            // NAPI completes on an empty ring: what GRO holds goes up now.
            self.gro.flush(&mut out);
            deliver(&mut out, &mut pending, batch);
        }
        for (i, (_, frame, _)) in frames.into_iter().enumerate() {
            self.gro.push(frame, &mut out);
            if i + 1 == n && flush {
                self.gro.flush(&mut out);
            }
            pending.extend_from_slice(&per_frame);
            deliver(&mut out, &mut pending, batch);
        }
        batch.leftover = pending;
    }

    fn holds_frames(&self) -> bool {
        self.gro.held() > 0
    }

    fn report(&self, into: &mut super::OffloadReport) {
        into.gro = Some(self.gro.stats().clone());
    }
}

impl Coalescer for Gro {
    type Verdict = bool;

    fn push_tagged(&mut self, frame: Vec<u8>, tag: u64, out: &mut Vec<(Coalesced, u64)>) -> bool {
        self.offer_tagged(frame, tag, out)
    }

    fn flush_tagged(&mut self, out: &mut Vec<(Coalesced, u64)>) {
        self.flush_all_tagged(out)
    }

    fn scratch(&mut self) -> &mut Vec<(Coalesced, u64)> {
        &mut self.scratch
    }
}

#[cfg(test)]
mod tests {
    use super::super::merge::fixture::{check, data, frame, pattern};
    use super::*;
    use smoltcp::wire::TcpControl;

    fn bytes(seq: u32, len: usize) -> Vec<u8> {
        (0..len as u32).map(|i| pattern(seq.wrapping_add(i))).collect()
    }

    #[test]
    fn full_segments_merge_until_psh() {
        let mut g = Gro::new(GroConfig::default());
        let mut out = Vec::new();
        assert!(g.push(data(1, 0, 1000, false), &mut out));
        assert!(g.push(data(1, 1000, 1000, false), &mut out));
        assert!(out.is_empty());
        assert!(g.push(data(1, 2000, 1000, true), &mut out));
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].segments, 3);
        let (seq, payload, psh) = check(&out[0].frame);
        assert_eq!((seq, psh), (0, true));
        assert_eq!(payload, bytes(0, 3000));
        assert_eq!(g.stats().flushes.psh_fin, 1);
    }

    #[test]
    fn a_short_segment_ends_the_aggregate() {
        let mut g = Gro::new(GroConfig::default());
        let mut out = Vec::new();
        g.push(data(1, 0, 1000, false), &mut out);
        g.push(data(1, 1000, 400, false), &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(g.stats().flushes.short, 1);
        assert_eq!(check(&out[0].frame).1, bytes(0, 1400));
    }

    #[test]
    fn a_longer_segment_or_a_gap_flushes_and_is_held_afresh() {
        let mut g = Gro::new(GroConfig::default());
        let mut out = Vec::new();
        g.push(data(1, 0, 500, false), &mut out);
        assert!(g.push(data(1, 500, 1000, false), &mut out), "held afresh");
        assert_eq!(out.len(), 1);
        assert!(g.push(data(1, 3000, 1000, false), &mut out));
        assert_eq!(out.len(), 2);
        assert_eq!(g.stats().flushes.mismatch, 2);
        assert_eq!((g.stats().mismatches.longer, g.stats().mismatches.sequence), (1, 1));
        assert_eq!(g.held(), 1);
    }

    #[test]
    fn a_different_ack_or_window_does_not_merge() {
        let mut g = Gro::new(GroConfig::default());
        let mut out = Vec::new();
        g.push(frame(1, 0, &bytes(0, 100), TcpControl::None, 1, 100), &mut out);
        g.push(frame(1, 100, &bytes(100, 100), TcpControl::None, 2, 100), &mut out);
        g.push(frame(1, 200, &bytes(200, 100), TcpControl::None, 2, 101), &mut out);
        g.flush(&mut out);
        assert_eq!(out.iter().map(|c| c.segments).collect::<Vec<_>>(), [1, 1, 1]);
        let m = g.stats().mismatches;
        assert_eq!((m.ack, m.flags_window), (1, 1));
    }

    #[test]
    fn aggregates_stop_below_64_kb() {
        let mut g = Gro::new(GroConfig::default());
        let mut out = Vec::new();
        for i in 0..50u32 {
            g.push(data(1, i * 1460, 1460, false), &mut out);
        }
        // 40 + 44 × 1460 = 64280 ≤ 65535 and a 45th would make 65740.
        assert_eq!(out[0].segments, 44);
        assert_eq!(out[0].frame.len(), 14 + 40 + 44 * 1460);
        assert_eq!(g.stats().flushes.size_64k, 1);
    }

    #[test]
    fn the_oldest_flow_makes_room_and_flags_flush_the_flow() {
        let mut g = Gro::new(GroConfig { max_flows: 2, ..GroConfig::default() });
        let mut out = Vec::new();
        g.push(data(1, 0, 100, false), &mut out);
        g.push(data(2, 0, 100, false), &mut out);
        g.push(data(3, 0, 100, false), &mut out);
        assert_eq!(g.stats().flushes.flows_full, 1);
        assert_eq!(g.stats().max_flows_held, 2);
        let syn = frame(2, 0, &[], TcpControl::Syn, 0, 100);
        assert!(!g.push(syn.clone(), &mut out));
        assert_eq!(out.len(), 3);
        assert_eq!(out[2].frame, syn);
        assert_eq!(g.stats().flushes.not_mergeable, 1);
    }
}
