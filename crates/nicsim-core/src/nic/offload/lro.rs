//! Large receive offload on the NIC, after Elbeshti, Dixon and Koziniec
//! (ISCIT 2012): the data path of their RISC-core LRO engine on real
//! Ethernet/IPv4/TCP frames. The timing of that core (RBI double buffer,
//! bus, DMA) is elsewhere; this is what it does to the bytes.
//!
//! * A **CAM** of `cam_entries` connection identifiers (the full TCP/IPv4
//!   4-tuple) each holding its stream's list: the in-order aggregate and a
//!   sub-list of out-of-order runs. A full CAM evicts (flushes) the least
//!   recently used stream.
//! * **RB memory** of `pages` pages of `page_size` bytes, their free
//!   pointers in a circular buffer; a stream holds one page, and everything
//!   it holds (aggregate plus sub-list frames) must fit it. A full page
//!   flushes the stream; no free page flushes the least recently used one.
//! * Every `flush_packets` frames (the interrupt-moderation window) every
//!   stream is flushed; a PSH segment flushes its stream.
//! * Classes ([`LroClass`]): BOM starts a list, COM appends in sequence,
//!   EOM appends a PSH segment and flushes, SSM (PSH, no list) goes up as
//!   is, OOP (not the expected sequence number) goes to the sub-list unless
//!   it only repeats held data (dropped, counted) or overlaps the list's
//!   tail (its new part is appended). Holes are left for the host's TCP.
//! * Frames that are not plain TCP/IPv4 data (ARP, UDP, fragments, IP
//!   options, bad checksums, SYN/FIN/RST/URG/CWR/ECE, pure ACKs) go up
//!   unchanged, after their stream (if any) is flushed so a flow's order
//!   is kept.
//!
//! [`super::capture`] runs this engine over captures.

use std::collections::VecDeque;

use serde::Serialize;

use super::merge::Coalesced;
use super::merge::{
    emit, ip_reason, parse_with, pass, seq_diff, Aggregate, Coalescer, FlowKey, Kind, OutputStats, PassReason,
    PassReasons, TcpView, IP_MAX,
};
use crate::nic::LroClass;

/// The engine's sizes (defaults: the study's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LroConfig {
    /// CAM entries: streams held at once (study: 64).
    pub cam_entries: usize,
    /// RB memory pages (study: 64).
    pub pages: usize,
    /// Bytes per page (study: 30 KB, "20 MTU packets"; 30 × 1024 holds 20
    /// 1514-byte frames).
    pub page_size: u64,
    /// Frames between flushes of every stream (study: 20, the interrupt
    /// moderation window).
    pub flush_packets: u32,
    /// Frames come over an undamaging wire: their TCP checksums are taken
    /// as valid and aggregates leave theirs unfilled (see `merge::TcpView::trusted`).
    pub trusted: bool,
}

impl Default for LroConfig {
    fn default() -> Self {
        // Elbeshti et al. 2012, section on the architecture: 64-entry CAM,
        // 64 × 30 KB RB pages, CAM flushed every 20 packets.
        LroConfig { cam_entries: 64, pages: 64, page_size: 30 * 1024, flush_packets: 20, trusted: false }
    }
}

/// Frames per class.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub struct ClassCounts {
    /// Beginning of message.
    pub bom: u64,
    /// Continuation.
    pub com: u64,
    /// End of message.
    pub eom: u64,
    /// Single-segment message.
    pub ssm: u64,
    /// Out of order.
    pub oop: u64,
}

impl ClassCounts {
    /// Frames of `class`.
    pub fn get(&self, class: LroClass) -> u64 {
        match class {
            LroClass::Bom => self.bom,
            LroClass::Com => self.com,
            LroClass::Eom => self.eom,
            LroClass::Ssm => self.ssm,
            LroClass::Oop => self.oop,
        }
    }

    fn add(&mut self, class: LroClass) {
        match class {
            LroClass::Bom => self.bom += 1,
            LroClass::Com => self.com += 1,
            LroClass::Eom => self.eom += 1,
            LroClass::Ssm => self.ssm += 1,
            LroClass::Oop => self.oop += 1,
        }
    }
}

/// Streams flushed, by cause (one per stream flushed, even if a cause
/// flushes several at once).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct LroFlushes {
    /// The moderation window of `flush_packets` frames ended.
    pub window: u64,
    /// A PSH segment (EOM, or PSH on an out-of-order segment).
    pub psh: u64,
    /// The stream's page could not take the next segment.
    pub page_full: u64,
    /// No free page for a new stream: the least recently used was flushed.
    pub no_page: u64,
    /// The CAM was full: the least recently used stream was evicted.
    pub evict: u64,
    /// A frame of the stream that LRO does not merge arrived.
    pub passthrough: u64,
    /// `flush()` was called (timer, end of input).
    pub explicit: u64,
}

/// What the engine did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LroStats {
    /// Frames offered.
    pub frames_in: u64,
    /// Frames handed to the host.
    pub frames_out: u64,
    /// Bytes of the frames offered.
    pub bytes_in: u64,
    /// Bytes of the frames handed up.
    pub bytes_out: u64,
    /// Segments that went up inside a frame of two or more.
    pub segments_merged: u64,
    /// Frames of two or more segments handed up.
    pub aggregates: u64,
    /// TCP data frames per class.
    pub classes: ClassCounts,
    /// Frames passed through unchanged (not LRO frames).
    pub passthrough: u64,
    /// Frames passed through, by reason (they sum to `passthrough`).
    pub passed: PassReasons,
    /// Segments dropped because all their data was already held.
    pub duplicates_dropped: u64,
    /// Payload bytes dropped as duplicates (whole segments and trimmed heads).
    pub duplicate_bytes: u64,
    /// Most CAM entries in use after any frame.
    pub cam_max: usize,
    /// Mean CAM entries in use, sampled after each frame.
    pub cam_mean: f64,
    /// Streams evicted from a full CAM.
    pub evictions: u64,
    /// Streams flushed, by cause.
    pub flushes: LroFlushes,
    #[serde(skip)]
    cam_sum: u64,
}

impl LroStats {
    /// Frames in per frame out (1 when nothing went out).
    pub fn ratio(&self) -> f64 {
        if self.frames_out == 0 {
            1.0
        } else {
            self.frames_in as f64 / self.frames_out as f64
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Cause {
    Window,
    Psh,
    PageFull,
    NoPage,
    Evict,
    Passthrough,
    Explicit,
}

/// One CAM entry and its lists.
#[derive(Debug)]
struct Stream {
    key: FlowKey,
    /// The in-order aggregate (the linked list from start to end).
    main: Aggregate,
    /// Out-of-order runs, each contiguous, sorted by sequence number.
    sub: Vec<Aggregate>,
    page: usize,
    last_use: u64,
}

impl Stream {
    /// Bytes of the stream's page in use.
    fn used(&self) -> usize {
        self.main.frame_len() + self.sub.iter().map(Aggregate::frame_len).sum::<usize>()
    }

    fn held(&self) -> usize {
        self.main.segments as usize + self.sub.iter().map(|a| a.segments as usize).sum::<usize>()
    }
}

/// The NIC LRO engine.
#[derive(Debug)]
pub struct NicLro {
    cfg: LroConfig,
    /// CAM entries in the order they were made.
    cam: Vec<Stream>,
    /// Circular buffer of free page numbers.
    free: VecDeque<usize>,
    stats: LroStats,
    /// Frames offered so far (arrival order).
    arrivals: u64,
    in_window: u32,
    scratch: Vec<(Coalesced, u64)>,
}

impl NicLro {
    /// An empty engine.
    pub fn new(cfg: LroConfig) -> Self {
        NicLro {
            cfg,
            cam: Vec::with_capacity(cfg.cam_entries),
            free: (0..cfg.pages).collect(),
            stats: LroStats::default(),
            arrivals: 0,
            in_window: 0,
            scratch: Vec::new(),
        }
    }

    /// Frames (segments) currently held.
    pub fn held(&self) -> usize {
        self.cam.iter().map(Stream::held).sum()
    }

    /// What the engine did so far.
    pub fn stats(&self) -> &LroStats {
        &self.stats
    }

    /// [`Coalescer::push_tagged`] (a tag is e.g. a timestamp):
    /// each output carries the tag of its latest-arriving segment.
    fn offer_tagged(&mut self, frame: Vec<u8>, tag: u64, out: &mut Vec<(Coalesced, u64)>) -> Option<LroClass> {
        self.arrivals += 1;
        self.stats.frames_in += 1;
        self.stats.bytes_in += frame.len() as u64;
        let class = self.offer(frame, tag, out);
        if let Some(c) = class {
            self.stats.classes.add(c);
        }
        let held = self.cam.len();
        self.stats.cam_max = self.stats.cam_max.max(held);
        self.stats.cam_sum += held as u64;
        self.stats.cam_mean = self.stats.cam_sum as f64 / self.stats.frames_in as f64;
        self.in_window += 1;
        if self.in_window >= self.cfg.flush_packets {
            self.in_window = 0;
            self.flush_all(Cause::Window, out);
        }
        class
    }

    /// [`Coalescer::flush_tagged`]: hand every held stream up.
    fn flush_all_tagged(&mut self, out: &mut Vec<(Coalesced, u64)>) {
        self.flush_all(Cause::Explicit, out);
    }

    fn offer(&mut self, frame: Vec<u8>, tag: u64, out: &mut Vec<(Coalesced, u64)>) -> Option<LroClass> {
        match parse_with(&frame, self.cfg.trusted) {
            Kind::Other(why) => {
                pass(&mut self.stats, why, frame, tag, out);
                None
            }
            Kind::LaterFragment(src, dst) => {
                while let Some(i) = self.cam.iter().position(|s| s.key.src == src && s.key.dst == dst) {
                    self.flush_stream(i, Cause::Passthrough, out);
                }
                pass(&mut self.stats, PassReason::IpFragment, frame, tag, out);
                None
            }
            Kind::Tcp(v) => {
                if let Some(why) = lro_reject(&v) {
                    if let Some(i) = self.find(&v.key) {
                        self.flush_stream(i, Cause::Passthrough, out);
                    }
                    pass(&mut self.stats, why, frame, tag, out);
                    return None;
                }
                Some(self.data(frame, &v, tag, out))
            }
        }
    }

    fn find(&self, key: &FlowKey) -> Option<usize> {
        self.cam.iter().position(|s| s.key == *key)
    }

    /// A TCP data segment LRO may merge.
    fn data(&mut self, frame: Vec<u8>, v: &TcpView, tag: u64, out: &mut Vec<(Coalesced, u64)>) -> LroClass {
        let order = self.arrivals;
        let page_size = usize::try_from(self.cfg.page_size).unwrap_or(usize::MAX);
        if let Some(i) = self.find(&v.key) {
            let st = &mut self.cam[i];
            st.last_use = order;
            let held = st.main.len as i64;
            let at = seq_diff(v.seq, st.main.seq); // offset from the list's start
            let len = v.len() as i64;
            if (at >= 0 && at + len <= held) || st.sub.iter().any(|a| covers(a, v)) {
                self.stats.duplicates_dropped += 1;
                self.stats.duplicate_bytes += v.len() as u64;
                return LroClass::Oop;
            }
            let class = if at == held {
                if v.psh {
                    LroClass::Eom
                } else {
                    LroClass::Com
                }
            } else {
                LroClass::Oop
            };
            if at >= 0 && at <= held {
                // In sequence, or overlapping the list's tail: append the new part.
                let skip = (held - at) as usize;
                let add = v.len() - skip;
                if st.used() + add <= page_size && st.main.ip_len_with(add) <= IP_MAX {
                    self.stats.duplicate_bytes += skip as u64;
                    st.main.append(&frame, v, skip, tag, order);
                    while let Some(j) = st.sub.iter().position(|a| a.seq == st.main.end_seq()) {
                        if st.main.ip_len_with(st.sub[j].len) > IP_MAX {
                            break;
                        }
                        let next = st.sub.remove(j);
                        st.main.absorb(next);
                    }
                    if v.psh {
                        self.flush_stream(i, Cause::Psh, out);
                    }
                    return class;
                }
            } else {
                let whole = v.end;
                if st.used() + whole <= page_size {
                    match st.sub.iter().position(|a| a.end_seq() == v.seq && a.ip_len_with(v.len()) <= IP_MAX) {
                        Some(j) => st.sub[j].append(&frame, v, 0, tag, order),
                        None => {
                            let start = st.main.seq;
                            let j = st.sub.partition_point(|a| seq_diff(a.seq, start) <= at);
                            st.sub.insert(j, Aggregate::start(frame, v, 0, tag, order));
                        }
                    }
                    if v.psh {
                        self.flush_stream(i, Cause::Psh, out);
                    }
                    return class;
                }
            }
            // The page cannot take it: flush the stream, start afresh.
            self.flush_stream(i, Cause::PageFull, out);
        }
        if v.psh {
            emit(&mut self.stats, Aggregate::start(frame, v, 0, tag, order), out);
            return LroClass::Ssm;
        }
        if v.end > page_size {
            // Larger than a page: nothing to merge it into.
            self.stats.flushes.page_full += 1;
            emit(&mut self.stats, Aggregate::start(frame, v, 0, tag, order), out);
            return LroClass::Bom;
        }
        if self.cam.len() >= self.cfg.cam_entries.max(1) {
            let lru = self.least_recent();
            self.stats.evictions += 1;
            self.flush_stream(lru, Cause::Evict, out);
        }
        if self.free.is_empty() {
            if self.cam.is_empty() {
                // No pages at all (`pages` = 0): LRO holds nothing.
                self.stats.flushes.no_page += 1;
                emit(&mut self.stats, Aggregate::start(frame, v, 0, tag, order), out);
                return LroClass::Bom;
            }
            let lru = self.least_recent();
            self.flush_stream(lru, Cause::NoPage, out);
        }
        let page = self.free.pop_front().expect("a page was freed");
        self.cam.push(Stream {
            key: v.key,
            main: Aggregate::start(frame, v, 0, tag, order),
            sub: Vec::new(),
            page,
            last_use: order,
        });
        LroClass::Bom
    }

    fn least_recent(&self) -> usize {
        (0..self.cam.len()).min_by_key(|&i| self.cam[i].last_use).expect("a stream is held")
    }

    fn flush_stream(&mut self, i: usize, cause: Cause, out: &mut Vec<(Coalesced, u64)>) {
        let st = self.cam.remove(i);
        self.free.push_back(st.page);
        let f = &mut self.stats.flushes;
        *match cause {
            Cause::Window => &mut f.window,
            Cause::Psh => &mut f.psh,
            Cause::PageFull => &mut f.page_full,
            Cause::NoPage => &mut f.no_page,
            Cause::Evict => &mut f.evict,
            Cause::Passthrough => &mut f.passthrough,
            Cause::Explicit => &mut f.explicit,
        } += 1;
        let start = st.main.seq;
        let mut all = st.sub;
        let at = all.partition_point(|a| seq_diff(a.seq, start) < 0);
        all.insert(at, st.main);
        for agg in all {
            emit(&mut self.stats, agg, out);
        }
    }

    fn flush_all(&mut self, cause: Cause, out: &mut Vec<(Coalesced, u64)>) {
        while !self.cam.is_empty() {
            self.flush_stream(0, cause, out);
        }
    }
}

/// Why `v` is not a plain TCP/IPv4 data segment (what LRO merges), if it is not.
fn lro_reject(v: &TcpView) -> Option<PassReason> {
    let plain_tcp = v.ack_flag && !(v.syn || v.fin || v.rst || v.urg || v.cwr || v.ece);
    ip_reason(v).or_else(|| {
        if !plain_tcp {
            Some(PassReason::Flags)
        } else if v.len() == 0 {
            Some(PassReason::NoPayload)
        } else {
            None
        }
    })
}

/// `a` already holds every byte of segment `v`.
fn covers(a: &Aggregate, v: &TcpView) -> bool {
    let at = seq_diff(v.seq, a.seq);
    at >= 0 && at + v.len() as i64 <= a.len as i64
}

impl LroStats {
    /// Add the counts of another engine's statistics (most CAM entries:
    /// the larger; mean: over both engines' frames).
    pub fn absorb(&mut self, o: &LroStats) {
        for (a, b) in [
            (&mut self.frames_in, o.frames_in),
            (&mut self.frames_out, o.frames_out),
            (&mut self.bytes_in, o.bytes_in),
            (&mut self.bytes_out, o.bytes_out),
            (&mut self.segments_merged, o.segments_merged),
            (&mut self.aggregates, o.aggregates),
            (&mut self.passthrough, o.passthrough),
            (&mut self.duplicates_dropped, o.duplicates_dropped),
            (&mut self.duplicate_bytes, o.duplicate_bytes),
            (&mut self.evictions, o.evictions),
            (&mut self.cam_sum, o.cam_sum),
            (&mut self.classes.bom, o.classes.bom),
            (&mut self.classes.com, o.classes.com),
            (&mut self.classes.eom, o.classes.eom),
            (&mut self.classes.ssm, o.classes.ssm),
            (&mut self.classes.oop, o.classes.oop),
            (&mut self.flushes.window, o.flushes.window),
            (&mut self.flushes.psh, o.flushes.psh),
            (&mut self.flushes.page_full, o.flushes.page_full),
            (&mut self.flushes.no_page, o.flushes.no_page),
            (&mut self.flushes.evict, o.flushes.evict),
            (&mut self.flushes.passthrough, o.flushes.passthrough),
            (&mut self.flushes.explicit, o.flushes.explicit),
        ] {
            *a += b;
        }
        self.passed.absorb(&o.passed);
        self.cam_max = self.cam_max.max(o.cam_max);
        self.cam_mean = if self.frames_in == 0 { 0.0 } else { self.cam_sum as f64 / self.frames_in as f64 };
    }
}

impl OutputStats for LroStats {
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

impl Coalescer for NicLro {
    type Verdict = Option<LroClass>;

    fn push_tagged(&mut self, frame: Vec<u8>, tag: u64, out: &mut Vec<(Coalesced, u64)>) -> Option<LroClass> {
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
    use super::super::merge::fixture::{check, data, pattern};
    use super::*;
    use crate::nic::offload::merge::ETH;

    const MSS: usize = 1460;

    fn lro() -> NicLro {
        NicLro::new(LroConfig::default())
    }

    /// The bytes `[seq, seq + len)` of the fixture stream.
    fn bytes(seq: u32, len: usize) -> Vec<u8> {
        (0..len as u32).map(|i| pattern(seq.wrapping_add(i))).collect()
    }

    #[test]
    fn bom_com_eom_merge_three_segments_into_one_frame() {
        let mut e = lro();
        let mut out = Vec::new();
        assert_eq!(e.push(data(1, 100, MSS, false), &mut out), Some(LroClass::Bom));
        assert_eq!(e.push(data(1, 100 + 1460, MSS, false), &mut out), Some(LroClass::Com));
        assert_eq!(e.held(), 2);
        assert!(out.is_empty());
        assert_eq!(e.push(data(1, 100 + 2920, 500, true), &mut out), Some(LroClass::Eom));
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].segments, 3);
        let (seq, payload, psh) = check(&out[0].frame);
        assert_eq!((seq, psh), (100, true));
        assert_eq!(payload, bytes(100, 3420));
        assert_eq!(e.held(), 0);
        assert_eq!(e.stats().flushes.psh, 1);
        assert_eq!(e.stats().classes, ClassCounts { bom: 1, com: 1, eom: 1, ssm: 0, oop: 0 });
    }

    #[test]
    fn ssm_goes_up_unchanged() {
        let mut e = lro();
        let mut out = Vec::new();
        let f = data(1, 5, 300, true);
        assert_eq!(e.push(f.clone(), &mut out), Some(LroClass::Ssm));
        assert_eq!(out, vec![Coalesced { frame: f, segments: 1 }]);
        assert_eq!(e.held(), 0);
    }

    #[test]
    fn oop_goes_to_the_sub_list_and_joins_when_the_hole_fills() {
        let mut e = lro();
        let mut out = Vec::new();
        e.push(data(1, 0, 1000, false), &mut out);
        assert_eq!(e.push(data(1, 2000, 1000, false), &mut out), Some(LroClass::Oop));
        assert_eq!(e.push(data(1, 3000, 1000, false), &mut out), Some(LroClass::Oop));
        assert_eq!(e.held(), 3);
        // The hole [1000, 2000) is still open: a flush sends two frames.
        let mut probe = NicLro::new(LroConfig::default());
        let mut o2 = Vec::new();
        for f in [data(1, 0, 1000, false), data(1, 2000, 1000, false), data(1, 3000, 1000, false)] {
            probe.push(f, &mut o2);
        }
        probe.flush(&mut o2);
        let runs: Vec<(u32, usize, u32)> = o2
            .iter()
            .map(|c| {
                let (s, p, _) = check(&c.frame);
                (s, p.len(), c.segments)
            })
            .collect();
        assert_eq!(runs, [(0, 1000, 1), (2000, 2000, 2)]);
        // Filling the hole joins the sub-list to the list.
        assert_eq!(e.push(data(1, 1000, 1000, false), &mut out), Some(LroClass::Com));
        e.flush(&mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].segments, 4);
        assert_eq!(check(&out[0].frame).1, bytes(0, 4000));
    }

    #[test]
    fn duplicates_of_held_data_are_dropped_and_counted() {
        let mut e = lro();
        let mut out = Vec::new();
        e.push(data(1, 0, 1000, false), &mut out);
        e.push(data(1, 1000, 1000, false), &mut out);
        assert_eq!(e.push(data(1, 1000, 1000, false), &mut out), Some(LroClass::Oop));
        e.push(data(1, 5000, 1000, false), &mut out);
        assert_eq!(e.push(data(1, 5000, 1000, false), &mut out), Some(LroClass::Oop));
        // Overlapping the tail: 500 bytes are new.
        assert_eq!(e.push(data(1, 1500, 1000, false), &mut out), Some(LroClass::Oop));
        assert_eq!(e.stats().duplicates_dropped, 2);
        assert_eq!(e.stats().duplicate_bytes, 2000 + 500);
        e.flush(&mut out);
        let got: Vec<(u32, Vec<u8>)> = out.iter().map(|c| check(&c.frame)).map(|(s, p, _)| (s, p)).collect();
        assert_eq!(got, [(0, bytes(0, 2500)), (5000, bytes(5000, 1000))]);
    }

    #[test]
    fn the_window_flushes_every_twenty_frames() {
        let mut e = lro();
        let mut out = Vec::new();
        for i in 0..19u32 {
            e.push(data(1, i * 1000, 1000, false), &mut out);
        }
        assert!(out.is_empty());
        assert_eq!(e.held(), 19);
        e.push(data(1, 19_000, 1000, false), &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].segments, 20);
        assert_eq!(e.stats().flushes.window, 1);
        assert_eq!(e.held(), 0);
    }

    #[test]
    fn a_full_page_flushes_the_stream() {
        // 30 KB pages: a 1514-byte head plus 1460 bytes a segment fits
        // 1 + 20 segments (1514 + 20 × 1460 = 30714 ≤ 30720), not 22.
        let mut e = NicLro::new(LroConfig { flush_packets: 1000, ..LroConfig::default() });
        let mut out = Vec::new();
        for i in 0..22u32 {
            let class = e.push(data(1, i * 1460, MSS, false), &mut out);
            assert_eq!(class, Some(if i == 0 || i == 21 { LroClass::Bom } else { LroClass::Com }), "segment {i}");
        }
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].segments, 21);
        assert_eq!(out[0].frame.len(), 30_714);
        assert_eq!(e.stats().flushes.page_full, 1);
    }

    #[test]
    fn a_full_cam_evicts_the_least_recently_used_stream() {
        let mut e = NicLro::new(LroConfig { cam_entries: 3, flush_packets: 1000, ..LroConfig::default() });
        let mut out = Vec::new();
        for port in 1..=3 {
            e.push(data(port, 0, 100, false), &mut out);
        }
        e.push(data(1, 100, 100, false), &mut out); // stream 2 is now the least recent
        e.push(data(4, 0, 100, false), &mut out);
        assert_eq!(e.stats().evictions, 1);
        assert_eq!(out.len(), 1);
        let tcp = smoltcp::wire::TcpPacket::new_checked(&out[0].frame[ETH + 20..]).unwrap();
        assert_eq!(tcp.src_port(), 2);
        assert_eq!(e.stats().cam_max, 3);
    }

    #[test]
    fn no_free_page_flushes_the_least_recent_stream() {
        let mut e = NicLro::new(LroConfig { pages: 2, flush_packets: 1000, ..LroConfig::default() });
        let mut out = Vec::new();
        for port in 1..=3 {
            e.push(data(port, 0, 100, false), &mut out);
        }
        assert_eq!((e.stats().flushes.no_page, e.stats().evictions, out.len()), (1, 0, 1));
    }

    #[test]
    fn other_frames_pass_through_after_their_stream_is_flushed() {
        let mut e = lro();
        let mut out = Vec::new();
        e.push(data(1, 0, 100, false), &mut out);
        e.push(data(2, 0, 100, false), &mut out);
        let arp = vec![0xff; 42];
        assert_eq!(e.push(arp.clone(), &mut out), None);
        assert_eq!(out, vec![Coalesced { frame: arp, segments: 1 }], "ARP flushes nothing");
        let fin = super::super::merge::fixture::frame(1, 100, &[], smoltcp::wire::TcpControl::Fin, 1000, 8192);
        assert_eq!(e.push(fin.clone(), &mut out), None);
        assert_eq!(out.len(), 3);
        assert_eq!(check(&out[1].frame).0, 0, "stream 1 first");
        assert_eq!(out[2].frame, fin);
        assert_eq!(e.held(), 1);
        assert_eq!(e.stats().flushes.passthrough, 1);
        assert_eq!(e.stats().passthrough, 2);
    }

    #[test]
    fn a_corrupt_segment_is_not_merged() {
        let mut e = lro();
        let mut out = Vec::new();
        e.push(data(1, 0, 100, false), &mut out);
        let mut bad = data(1, 100, 100, false);
        let last = bad.len() - 1;
        bad[last] ^= 0x55;
        assert_eq!(e.push(bad.clone(), &mut out), None);
        assert_eq!(out.len(), 2);
        assert_eq!(out[1].frame, bad, "passed up for the host to drop");
    }

    #[test]
    fn stats_serialise_with_class_names() {
        let mut e = lro();
        e.push(data(1, 0, 100, false), &mut Vec::new());
        let json = serde_json::to_string(e.stats()).unwrap();
        assert!(json.contains("\"BOM\":1"), "{json}");
        assert!(json.contains("\"page_full\":0"), "{json}");
    }
}
