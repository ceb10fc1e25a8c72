//! Offline receive coalescing of a capture: [`coalesce_capture`] runs the
//! NIC LRO engine ([`super::lro`]) or host GRO ([`super::gro`]) over a pcap
//! or pcapng file and writes the frames the host would see, with every
//! input frame accounted for (merged, sent up alone, passed through for a
//! reason, or dropped as a duplicate). A tool on top of the engines, not
//! part of the simulated NIC. Units: nanoseconds for capture timestamps,
//! bytes for frames.

use std::path::Path;

use serde::Serialize;

use super::gro::{Gro, GroConfig, GroStats};
use super::lro::{LroConfig, LroStats, NicLro};
use super::merge::{parse, Coalesced, Coalescer, FlowKey, Kind, PassReason, PassReasons, ETH};
use crate::error::Error;

/// Which coalescing engine [`coalesce_pcap`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// The NIC LRO engine with the study's sizes, flushed at the end of input.
    Nic,
    /// The NIC LRO engine with other sizes (e.g. a flush window above the
    /// CAM's size, so the CAM can overflow), flushed at the end of input.
    NicWith(LroConfig),
    /// Host GRO; frames closer than `batch_gap_ns` form one poll batch.
    Gro {
        /// A gap of at least this many nanoseconds ends a poll batch.
        batch_gap_ns: u64,
    },
}

/// How [`coalesce_capture`] treats its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CaptureOptions {
    /// Treat TCP checksums left to the NIC (zero or the pseudo-header sum,
    /// as captured on a sending Linux host with checksum offload) as good:
    /// such frames get their correct checksum written before coalescing.
    pub assume_checksums_ok: bool,
}

/// One TCP direction of a capture: frames and payload in and out.
#[derive(Debug, Clone, Serialize)]
pub struct FlowReport {
    /// Interface of the capture it was seen on.
    pub interface: usize,
    /// Source address and port.
    pub src: String,
    /// Destination address and port.
    pub dst: String,
    /// TCP frames read.
    pub frames_in: u64,
    /// TCP frames written.
    pub frames_out: u64,
    /// TCP payload bytes read.
    pub payload_in: u64,
    /// TCP payload bytes written (less any duplicates the NIC engine dropped).
    pub payload_out: u64,
    /// `frames_in / frames_out`.
    pub coalescing_ratio: f64,
}

/// Where every input frame went: the four sum to the frames read.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Accounting {
    /// Segments merged into a frame of two or more.
    pub merged: u64,
    /// Segments the engine held but sent up alone (nothing joined them
    /// before a flush; see the flush causes).
    pub alone: u64,
    /// Frames passed through unchanged (see the reasons).
    pub passed_through: u64,
    /// Segments the NIC engine dropped as duplicates of held data.
    pub duplicates_dropped: u64,
}

/// What [`coalesce_pcap`] did.
#[derive(Debug, Clone, Serialize)]
pub struct PcapReport {
    /// "nic" or "gro".
    pub engine: &'static str,
    /// "pcap" or "pcapng" (the output is written in the same format).
    pub format: &'static str,
    /// Interfaces described by the capture (one engine each).
    pub interfaces: usize,
    /// Frames read.
    pub frames_in: u64,
    /// Frames written.
    pub frames_out: u64,
    /// `frames_in / frames_out`.
    pub coalescing_ratio: f64,
    /// GRO poll batches (0 for the NIC engine).
    pub batches: u64,
    /// TCP/IPv4 frames read.
    pub tcp_frames: u64,
    /// TCP/IPv4 frames whose TCP checksum was left to the NIC (zero or the
    /// pseudo-header sum).
    pub checksums_offloaded: u64,
    /// Whether those were treated as good (`--assume-checksums-ok`).
    pub assume_checksums_ok: bool,
    /// Frames whose TCP checksum was written in (offloaded ones, with the option).
    pub checksums_filled: u64,
    /// Where every frame went.
    pub accounting: Accounting,
    /// Frames passed through, by reason (engine and link layer together).
    pub passed: PassReasons,
    /// Each TCP direction, in order of first appearance.
    pub flows: Vec<FlowReport>,
    /// The NIC engine's statistics (all interfaces together).
    pub nic: Option<LroStats>,
    /// The GRO engine's statistics (all interfaces together).
    pub gro: Option<GroStats>,
}

impl PcapReport {
    /// The report as JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("plain data serialises")
    }
}

/// One interface's engine.
enum Lane {
    Nic(NicLro),
    Gro { gro: Gro, last: Option<u64>, batches: u64, gap: u64 },
}

impl Lane {
    fn new(engine: Engine) -> Lane {
        match engine {
            Engine::Nic => Lane::Nic(NicLro::new(LroConfig::default())),
            Engine::NicWith(cfg) => Lane::Nic(NicLro::new(cfg)),
            Engine::Gro { batch_gap_ns } => {
                Lane::Gro { gro: Gro::new(GroConfig::default()), last: None, batches: 0, gap: batch_gap_ns }
            }
        }
    }

    fn push(&mut self, frame: Vec<u8>, time_ns: u64, tag: u64, out: &mut Vec<(Coalesced, u64)>) {
        match self {
            Lane::Nic(lro) => {
                lro.push_tagged(frame, tag, out);
            }
            Lane::Gro { gro, last, batches, gap } => {
                match *last {
                    Some(prev) if time_ns.saturating_sub(prev) < *gap => {}
                    Some(_) => {
                        gro.flush_tagged(out);
                        *batches += 1;
                    }
                    None => *batches += 1,
                }
                *last = Some(time_ns);
                gro.push_tagged(frame, tag, out);
            }
        }
    }

    fn flush(&mut self, out: &mut Vec<(Coalesced, u64)>) {
        match self {
            Lane::Nic(lro) => lro.flush_tagged(out),
            Lane::Gro { gro, .. } => gro.flush_tagged(out),
        }
    }
}

/// [`coalesce_capture`] with the default options.
pub fn coalesce_pcap(input: &Path, output: &Path, engine: Engine) -> Result<PcapReport, Error> {
    coalesce_capture(input, output, engine, CaptureOptions::default())
}

/// Run `engine` over the capture `input` (pcap or pcapng) and write the
/// frames the host would see to `output`, in the input's format and link
/// types, each stamped with the input timestamp of its latest-arriving
/// segment (pcap: nanosecond timestamps; pcapng: `if_tsresol` 10⁻⁹).
///
/// Each interface of the capture is a NIC of its own: one engine each,
/// their outputs in the order the host would see them. The engines see an
/// Ethernet frame built from the record's network-layer packet (VLAN tags
/// and Linux cooked headers passed over, [`pcap_read::network_layer`]);
/// each output frame gets back the link header, VLAN tags included, of its
/// latest segment's record. Records of a link type nicsim does not read
/// pass through as they are. Flows with the same addresses and ports on
/// two VLANs of one interface are one flow to the NIC engine (its CAM keys
/// on the 4-tuple) and two to GRO when their MACs differ.
///
/// [`pcap_read::network_layer`]: crate::probe::pcap_read::network_layer
pub fn coalesce_capture(
    input: &Path,
    output: &Path,
    engine: Engine,
    options: CaptureOptions,
) -> Result<PcapReport, Error> {
    use super::merge::fill_tcp_checksum;
    use crate::probe::pcap_read::{self, network_layer, Format};
    use std::collections::HashMap;

    let bytes = std::fs::read(input).map_err(|e| Error::io(input.display(), e))?;
    let capture = pcap_read::parse(&bytes).map_err(|e| Error::io(input.display(), e))?;
    drop(bytes);
    let frames_in = capture.records.len() as u64;
    let stamp = |ns: u128| u64::try_from(ns).unwrap_or(u64::MAX);
    let mut lanes: Vec<Option<Lane>> = (0..capture.interfaces.len()).map(|_| None).collect();
    // Per record: its time, interface and link header (None: passed as is).
    let mut heads: Vec<(u64, usize, Option<Vec<u8>>)> = Vec::with_capacity(capture.records.len());
    let mut out: Vec<(Coalesced, u64)> = Vec::with_capacity(capture.records.len());
    let mut link_passed = PassReasons::default();
    let (mut tcp_frames, mut offloaded, mut filled) = (0u64, 0u64, 0u64);
    let mut flows: Vec<FlowReport> = Vec::new();
    let mut flow_index: HashMap<(usize, FlowKey), usize> = HashMap::new();
    let linktypes: Vec<u32> = capture.interfaces.iter().map(|i| i.linktype).collect();
    let (format, interfaces) = (capture.format, capture.interfaces);
    for (i, r) in capture.records.into_iter().enumerate() {
        let tag = i as u64;
        let time = stamp(r.time_ns);
        let Ok(net) = network_layer(linktypes[r.interface], &r.data) else {
            link_passed.add(PassReason::LinkLayer);
            heads.push((time, r.interface, None));
            out.push((Coalesced { frame: r.data, segments: 1 }, tag));
            continue;
        };
        let mut frame = Vec::with_capacity(ETH + r.data.len() - net.offset);
        frame.extend_from_slice(&net.macs);
        frame.extend_from_slice(&net.ethertype.to_be_bytes());
        frame.extend_from_slice(&r.data[net.offset..]);
        let mut data = r.data;
        data.truncate(net.offset);
        heads.push((time, r.interface, Some(data)));
        if let Kind::Tcp(v) = parse(&frame) {
            tcp_frames += 1;
            if v.offloaded {
                offloaded += 1;
                if options.assume_checksums_ok {
                    fill_tcp_checksum(&mut frame, &v);
                    filled += 1;
                }
            }
            let at = *flow_index.entry((r.interface, v.key)).or_insert_with(|| {
                flows.push(FlowReport {
                    interface: r.interface,
                    src: format!("{}:{}", v.key.src, v.key.sport),
                    dst: format!("{}:{}", v.key.dst, v.key.dport),
                    frames_in: 0,
                    frames_out: 0,
                    payload_in: 0,
                    payload_out: 0,
                    coalescing_ratio: 1.0,
                });
                flows.len() - 1
            });
            flows[at].frames_in += 1;
            flows[at].payload_in += v.len() as u64;
        }
        lanes[r.interface].get_or_insert_with(|| Lane::new(engine)).push(frame, time, tag, &mut out);
    }
    for lane in lanes.iter_mut().flatten() {
        lane.flush(&mut out);
    }
    // Frames for the host, with their link headers back.
    let mut written: Vec<(u64, usize, Vec<u8>)> = Vec::with_capacity(out.len());
    for (c, tag) in out {
        let (time, interface, head) = &heads[tag as usize];
        let Some(head) = head else {
            written.push((*time, *interface, c.frame));
            continue;
        };
        if let Kind::Tcp(v) = parse(&c.frame) {
            if let Some(&at) = flow_index.get(&(*interface, v.key)) {
                flows[at].frames_out += 1;
                flows[at].payload_out += v.len() as u64;
            }
        }
        let mut frame = Vec::with_capacity(head.len() + c.frame.len() - ETH);
        frame.extend_from_slice(head);
        frame.extend_from_slice(&c.frame[ETH..]);
        written.push((*time, *interface, frame));
    }
    for f in &mut flows {
        f.coalescing_ratio = if f.frames_out == 0 { 1.0 } else { f.frames_in as f64 / f.frames_out as f64 };
    }
    let (mut nic, mut gro, mut batches) = (None::<LroStats>, None::<GroStats>, 0);
    for lane in lanes.into_iter().flatten() {
        match lane {
            Lane::Nic(lro) => nic.get_or_insert_with(LroStats::default).absorb(lro.stats()),
            Lane::Gro { gro: g, batches: b, .. } => {
                gro.get_or_insert_with(GroStats::default).absorb(g.stats());
                batches += b;
            }
        }
    }
    let name = match engine {
        Engine::Nic | Engine::NicWith(_) => {
            nic.get_or_insert_with(LroStats::default);
            "nic"
        }
        Engine::Gro { .. } => {
            gro.get_or_insert_with(GroStats::default);
            "gro"
        }
    };
    let mut passed = link_passed;
    let (engine_passed, passthrough_engine, aggregates, merged, duplicates) = match (&nic, &gro) {
        (Some(n), _) => (n.passed, n.passthrough, n.aggregates, n.segments_merged, n.duplicates_dropped),
        (_, Some(g)) => (g.passed, g.passthrough, g.aggregates, g.segments_merged, 0),
        _ => (PassReasons::default(), 0, 0, 0, 0),
    };
    passed.absorb(&engine_passed);
    let frames_out = written.len() as u64;
    let passed_through = passthrough_engine + link_passed.total();
    let accounting = Accounting {
        merged,
        alone: frames_out.saturating_sub(passed_through + aggregates),
        passed_through,
        duplicates_dropped: duplicates,
    };
    let report = PcapReport {
        engine: name,
        format: if format == Format::PcapNg { "pcapng" } else { "pcap" },
        interfaces: interfaces.len(),
        frames_in,
        frames_out,
        coalescing_ratio: if frames_out == 0 { 1.0 } else { frames_in as f64 / frames_out as f64 },
        batches,
        tcp_frames,
        checksums_offloaded: offloaded,
        assume_checksums_ok: options.assume_checksums_ok,
        checksums_filled: filled,
        accounting,
        passed,
        flows,
        nic,
        gro,
    };
    match format {
        Format::Pcap => write_pcap(output, linktypes.first().copied().unwrap_or(1), &written)?,
        Format::PcapNg => write_pcapng(output, &interfaces, &written)?,
    }
    Ok(report)
}

/// Write `frames` (time in ns, interface, bytes) as a nanosecond
/// little-endian pcap of `linktype`.
fn write_pcap(path: &Path, linktype: u32, frames: &[(u64, usize, Vec<u8>)]) -> Result<(), Error> {
    use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
    use pcap_file::{DataLink, Endianness, TsResolution};
    use std::io::Write;
    let file = std::fs::File::create(path).map_err(|e| Error::io(path.display(), e))?;
    let header = PcapHeader {
        // Merged frames reach 14 + 65535 bytes; libpcap's maximum snaplen.
        snaplen: crate::probe::pcap_read::MAX_RECORD,
        datalink: DataLink::from(linktype),
        ts_resolution: TsResolution::NanoSecond,
        endianness: Endianness::Little,
        ..Default::default()
    };
    let mut w =
        PcapWriter::with_header(std::io::BufWriter::new(file), header).map_err(|e| Error::io(path.display(), e))?;
    for (ns, _, frame) in frames {
        let ts = std::time::Duration::from_nanos(*ns);
        w.write_packet(&PcapPacket::new(ts, frame.len() as u32, frame)).map_err(|e| Error::io(path.display(), e))?;
    }
    w.into_writer().flush().map_err(|e| Error::io(path.display(), e))
}

/// Write `frames` as pcapng: one section, the input's interfaces (link
/// types and names kept, nanosecond timestamps), one Enhanced Packet Block
/// per frame.
fn write_pcapng(
    path: &Path,
    interfaces: &[crate::probe::pcap_read::Interface],
    frames: &[(u64, usize, Vec<u8>)],
) -> Result<(), Error> {
    use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
    use pcap_file::pcapng::blocks::interface_description::{InterfaceDescriptionBlock, InterfaceDescriptionOption};
    use pcap_file::pcapng::PcapNgWriter;
    use pcap_file::DataLink;
    use std::borrow::Cow;
    use std::io::Write;
    let io = |e: pcap_file::PcapError| Error::io(path.display(), e);
    let file = std::fs::File::create(path).map_err(|e| Error::io(path.display(), e))?;
    let mut w = PcapNgWriter::new(std::io::BufWriter::new(file)).map_err(io)?;
    for i in interfaces {
        let mut options = vec![InterfaceDescriptionOption::IfTsResol(9)];
        if let Some(name) = &i.name {
            options.push(InterfaceDescriptionOption::IfName(Cow::Owned(name.clone())));
        }
        let idb = InterfaceDescriptionBlock {
            linktype: DataLink::from(i.linktype),
            snaplen: crate::probe::pcap_read::MAX_RECORD,
            options,
        };
        w.write_pcapng_block(idb).map_err(io)?;
    }
    for (ns, interface, frame) in frames {
        let epb = EnhancedPacketBlock {
            interface_id: *interface as u32,
            timestamp: std::time::Duration::from_nanos(*ns),
            original_len: frame.len() as u32,
            data: Cow::Borrowed(frame),
            options: vec![],
        };
        w.write_pcapng_block(epb).map_err(io)?;
    }
    w.into_inner().flush().map_err(|e| Error::io(path.display(), e))
}
