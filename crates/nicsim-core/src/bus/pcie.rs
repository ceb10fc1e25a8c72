//! PCI Express: a full-duplex serial link; each direction carries TLPs
//! back to back at the link's data rate.
//!
//! Link rate per direction = lanes × raw rate × encoding: 2.5, 5, 8, 16, 32
//! GT/s per lane for generations 1–5, 8b/10b for gen 1–2 and 128b/130b for
//! gen 3–5 (PCIe base spec). Gen 1 x1 moves 250 MB/s, gen 3 x8 7.877 GB/s.
//!
//! Every TLP costs, besides its payload (rounded up to whole 4-byte
//! dwords): its header, 16 B for a memory write or read request with a
//! 64-bit address (4 DW), 12 B for a completion with data (3 DW), and 8 B
//! of link overhead, the same for every generation: gen 1–2 frame a TLP
//! with STP + END (2 B) around a 2 B sequence number and 4 B LCRC; gen 3–5
//! use a 4 B STP token that carries the sequence number, then the 4 B LCRC
//! (the pcie-bench model, Neugebauer et al. 2018, also uses 8 B).
//! Optionally `dllp_per_tlp` bytes of ACK/UpdateFC DLLPs are charged to each
//! TLP in its own direction (they really travel the other way; charging
//! them here approximates symmetric traffic).
//!
//! * A write of `n` bytes (device DMA write upstream, CPU MMIO write
//!   downstream) is `ceil(n / max_payload)` write TLPs.
//! * A read of `n` bytes is `ceil(n / max_read_request)` read requests sent
//!   back to back, each answered by completions of at most
//!   `completion_payload` bytes in the other direction. The read latency is
//!   paid once per transfer: completions of the first request start
//!   `read_latency` after it leaves the link, and the later requests' are
//!   pipelined behind them (enough tags and credits are assumed), so an
//!   unloaded read takes `request + read_latency + completions`.
//!
//! Transfers of several TLPs are served first come first served, whole.
//! A transfer of one TLP (a descriptor fetch or write-back, a doorbell)
//! does not queue behind them: the link arbitrates between TLPs, so it
//! waits at most for the TLP on the wire (the largest TLP's time), and the
//! direction's backlog grows by its time (see `Bus::transfer`).
//!
//! Times are exact rationals of picoseconds, rounded up once per segment
//! (requests, completions, a write). Not modelled: lane striping padding,
//! SKP ordered sets (~0.3 %), ECRC, replay, flow-control credit stalls and
//! tag limits, ordering rules, 4 KiB boundary splits, ATS, and root complex
//! latency for writes.

use crate::engine::time::PS_PER_S;
use crate::engine::Dur;

/// Header of a memory write or read request with a 64-bit address (4 DW), bytes.
pub const REQUEST_HEADER: u64 = 16;
/// Header of a completion with data (3 DW), bytes.
pub const COMPLETION_HEADER: u64 = 12;
/// Sequence number, LCRC and framing around every TLP, bytes (all generations).
pub const TLP_LINK_OVERHEAD: u64 = 8;

/// Raw rate of one lane of generation `gen`, transfers (bits) per second.
pub fn lane_rate(gen: u8) -> u64 {
    match gen {
        1 => 2_500_000_000,
        2 => 5_000_000_000,
        3 => 8_000_000_000,
        4 => 16_000_000_000,
        5 => 32_000_000_000,
        _ => panic!("PCIe generation {gen} not validated"),
    }
}

/// Line encoding of generation `gen` as (data bits, line bits): 8b/10b or 128b/130b.
pub fn encoding(gen: u8) -> (u64, u64) {
    if gen <= 2 {
        (8, 10)
    } else {
        (128, 130)
    }
}

/// The costs of one read on the link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ReadCost {
    /// The first read request on the request direction.
    pub first_request: Dur,
    /// All read requests, back to back, on the request direction.
    pub requests: Dur,
    /// From the end of the first request to the start of the completions.
    pub latency: Dur,
    /// All completions, back to back, on the other direction.
    pub completions: Dur,
    /// Whether the read is one request answered by one completion.
    pub single: bool,
}

/// The timing of one PCIe link.
#[derive(Debug, Clone)]
pub(super) struct PcieLink {
    /// Picoseconds per wire byte = `num / den`.
    num: u128,
    den: u128,
    max_payload: u64,
    max_read_request: u64,
    completion_payload: u64,
    read_latency: Dur,
    dllp: u64,
}

/// TLPs and dword-rounded payload bytes to carry `bytes` in pieces of at most `max`.
fn split(bytes: u64, max: u64) -> (u64, u64) {
    let (full, rest) = (bytes / max, bytes % max);
    (full + u64::from(rest > 0), full * max + rest.next_multiple_of(4))
}

impl PcieLink {
    /// A link of generation `gen` with `lanes` lanes and the given TLP sizes.
    pub(super) fn new(
        gen: u8,
        lanes: u8,
        max_payload: u64,
        max_read_request: u64,
        completion_payload: u64,
        read_latency: Dur,
        dllp: u64,
    ) -> Self {
        assert!(
            lanes > 0 && max_payload.is_multiple_of(4) && completion_payload.is_multiple_of(4),
            "bus config not validated"
        );
        assert!(max_read_request > 0 && completion_payload > 0, "bus config not validated");
        let (data_bits, line_bits) = encoding(gen);
        PcieLink {
            num: u128::from(8 * line_bits) * u128::from(PS_PER_S),
            den: u128::from(data_bits) * u128::from(lane_rate(gen)) * u128::from(lanes),
            max_payload,
            max_read_request,
            completion_payload,
            read_latency,
            dllp,
        }
    }

    /// Data bytes per second one direction moves after line encoding.
    pub(super) fn link_rate(&self) -> f64 {
        self.den as f64 * PS_PER_S as f64 / self.num as f64
    }

    /// Time `wire` bytes occupy one direction, rounded up to a whole picosecond.
    fn time(&self, wire: u64) -> Dur {
        let ps = (u128::from(wire) * self.num).div_ceil(self.den);
        Dur(u64::try_from(ps).expect("bus transfer longer than u64 picoseconds"))
    }

    /// Wire bytes of the write TLPs carrying `bytes`.
    pub(super) fn write_wire(&self, bytes: u64) -> u64 {
        let (tlps, payload) = split(bytes, self.max_payload);
        payload + tlps * (REQUEST_HEADER + TLP_LINK_OVERHEAD + self.dllp)
    }

    /// Wire bytes of one read request.
    pub(super) fn request_wire(&self) -> u64 {
        REQUEST_HEADER + TLP_LINK_OVERHEAD + self.dllp
    }

    /// Wire bytes of the completions answering a read of `bytes`.
    pub(super) fn completion_wire(&self, bytes: u64) -> u64 {
        let per_request = |n: u64| {
            let (tlps, payload) = split(n, self.completion_payload);
            payload + tlps * (COMPLETION_HEADER + TLP_LINK_OVERHEAD + self.dllp)
        };
        let (full, rest) = (bytes / self.max_read_request, bytes % self.max_read_request);
        full * per_request(self.max_read_request) + if rest > 0 { per_request(rest) } else { 0 }
    }

    /// Time the write TLPs carrying `bytes` occupy their direction.
    pub(super) fn write_cost(&self, bytes: u64) -> Dur {
        self.time(self.write_wire(bytes))
    }

    /// The costs of reading `bytes` (at least 1).
    pub(super) fn read_cost(&self, bytes: u64) -> ReadCost {
        let requests = bytes.div_ceil(self.max_read_request);
        ReadCost {
            first_request: self.time(self.request_wire()),
            requests: self.time(requests * self.request_wire()),
            latency: self.read_latency,
            completions: self.time(self.completion_wire(bytes)),
            single: requests == 1 && bytes <= self.completion_payload,
        }
    }

    /// Whether a write of `bytes` is a single TLP.
    pub(super) fn single_write(&self, bytes: u64) -> bool {
        bytes <= self.max_payload
    }

    /// Time the largest TLP (a full write or completion) occupies a direction:
    /// the most a TLP that becomes ready waits for the one on the wire.
    pub(super) fn largest_tlp(&self) -> Dur {
        let write = self.max_payload + REQUEST_HEADER;
        let completion = self.completion_payload + COMPLETION_HEADER;
        self.time(write.max(completion) + TLP_LINK_OVERHEAD + self.dllp)
    }

    /// Sustained bytes/s of large writes (full TLPs back to back).
    pub(super) fn write_peak(&self) -> f64 {
        self.link_rate() * self.max_payload as f64 / self.write_wire(self.max_payload) as f64
    }

    /// Sustained bytes/s of large reads (completions back to back; latency amortised).
    pub(super) fn read_peak(&self) -> f64 {
        self.link_rate() * self.max_read_request as f64 / self.completion_wire(self.max_read_request) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(gen: u8, lanes: u8) -> PcieLink {
        PcieLink::new(gen, lanes, 256, 512, 256, Dur(500_000), 0)
    }

    #[test]
    fn raw_rates_per_direction() {
        // Gen 1 x1: 2.5 GT/s × 8/10 = 2 Gb/s = 250 MB/s, 4 ns per byte.
        assert!((link(1, 1).link_rate() - 250e6).abs() < 1e-3);
        assert_eq!(link(1, 1).time(1), Dur(4000));
        // Gen 3 x8: 8 × 8 GT/s × 128/130 / 8 = 7.877 GB/s, 126.953125 ps per byte.
        assert!((link(3, 8).link_rate() - 7.876_923e9).abs() < 1e3);
        assert_eq!(link(3, 8).time(1024), Dur(130_000));
        // Gen 2 x4 = 2 GB/s; gen 5 x16 = 63.015 GB/s.
        assert!((link(2, 4).link_rate() - 2e9).abs() < 1e-3);
        assert!((link(5, 16).link_rate() - 63.015_384e9).abs() < 1e3);
    }

    #[test]
    fn a_256_byte_write_tlp_is_280_wire_bytes() {
        let l = link(1, 1);
        // 256 payload + 16 header + 2 sequence + 4 LCRC + 2 framing.
        assert_eq!(l.write_wire(256), 280);
        assert_eq!(l.write_cost(256), Dur(280 * 4000));
        let efficiency = l.write_peak() / l.link_rate();
        assert!((efficiency - 256.0 / 280.0).abs() < 1e-12);
        // A 1-byte write still carries one dword.
        assert_eq!(l.write_wire(1), 28);
    }

    #[test]
    fn a_1500_byte_write_on_gen3_x8() {
        // 5 × 256 + 220 B = 6 TLPs: 1500 + 6 × 24 = 1644 wire bytes
        // × 126.953125 ps = 208 710.94 ps → 208 711 ps.
        let l = link(3, 8);
        assert_eq!(l.write_wire(1500), 1644);
        assert_eq!(l.write_cost(1500), Dur(208_711));
    }

    #[test]
    fn reads_pay_one_request_the_latency_and_the_completions() {
        // Gen 1 x1, 64 B: request 24 B = 96 ns; completion 64 + 12 + 8 = 84 B = 336 ns.
        let c = link(1, 1).read_cost(64);
        assert_eq!(
            c,
            ReadCost {
                first_request: Dur(96_000),
                requests: Dur(96_000),
                latency: Dur(500_000),
                completions: Dur(336_000),
                single: true,
            }
        );
        // Gen 3 x8, 1500 B: 3 requests (512, 512, 476); completions 2 × (512 + 2 × 20)
        // + (476 + 2 × 20) = 1620 B = 205 664.06 ps → 205 665; one request 24 B = 3046.875 → 3047.
        let l = link(3, 8);
        assert_eq!(l.completion_wire(1500), 1620);
        let c = l.read_cost(1500);
        assert_eq!((c.first_request, c.requests, c.completions), (Dur(3047), Dur(9141), Dur(205_665)));
        assert!(!c.single);
        // 256 B is one completion; 260 B is two.
        assert!(l.read_cost(256).single && !l.read_cost(260).single);
    }

    #[test]
    fn read_peak_counts_completion_headers() {
        let l = link(1, 1);
        // 512 B request → 2 completions of 256 B: 512 / 552 of the link.
        assert!((l.read_peak() - 250e6 * 512.0 / 552.0).abs() < 1e-3);
        // A root complex splitting completions at 64 B: 8 × (64 + 20) = 672 B per 512 B.
        let rcb = PcieLink::new(1, 1, 256, 512, 64, Dur(500_000), 0);
        assert_eq!(rcb.completion_wire(512), 672);
        assert!((rcb.read_peak() - 250e6 * 512.0 / 672.0).abs() < 1e-3);
    }

    #[test]
    fn dllp_bytes_are_charged_per_tlp() {
        // 16 B of ACK + UpdateFC per TLP: 256 + 24 + 16 = 296 B.
        let l = PcieLink::new(1, 1, 256, 512, 256, Dur::ZERO, 16);
        assert_eq!(l.write_wire(256), 296);
        assert_eq!(l.request_wire(), 40);
        assert_eq!(l.completion_wire(256), 256 + 36);
    }
}
