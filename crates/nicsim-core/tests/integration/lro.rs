//! Receive coalescing keeps every socket's byte stream: many TCP flows (more
//! than the CAM's 64) interleaved at random, with loss, duplication,
//! reordering and repacketised retransmissions, give each receiving socket
//! the same bytes with NIC LRO, with host GRO and with neither. Every frame
//! the engines hand up is a valid IPv4/TCP frame, and payload bytes are
//! conserved (less the duplicates LRO drops). The pcap tool writes a
//! capture of the merged frames.

use std::collections::BTreeMap;

use nicsim_core::nic::capture::{coalesce_pcap, Engine};
use nicsim_core::nic::gro::{Gro, GroConfig};
use nicsim_core::nic::lro::{LroConfig, NicLro};
use nicsim_core::nic::offload::merge::Coalesced;
use nicsim_core::nic::offload::Coalescer;
use nicsim_core::nic::LroClass;
use nicsim_testkit::frame::TcpFrame;
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use smoltcp::wire::{
    EthernetFrame, EthernetProtocol, IpAddress, IpProtocol, Ipv4Address, Ipv4Packet, TcpControl, TcpPacket,
    TcpTimestampRepr,
};

const ETH: usize = 14;

/// A flow's identity as the receiving socket sees it.
type Key = (Ipv4Address, Ipv4Address, u16, u16);

/// The addresses and ports of flow `flow` (client 10.1.x.y:flow+1000 to
/// 10.0.0.1:5001), for a [`TcpFrame`] to fill in.
fn flow_frame(flow: u16) -> TcpFrame<'static> {
    TcpFrame {
        src_mac: [2, 0, 0, 0, (flow >> 8) as u8, flow as u8],
        dst_mac: [2, 0, 0, 0, 0, 1],
        src: Ipv4Address::new(10, 1, (flow >> 8) as u8, flow as u8),
        dst: Ipv4Address::new(10, 0, 0, 1),
        src_port: 1000 + flow,
        dst_port: 5001,
        ..TcpFrame::default()
    }
}

/// A UDP datagram or an ARP frame: traffic the engines must pass through.
fn other(rng: &mut ChaCha8Rng) -> Vec<u8> {
    if rng.gen_bool(0.5) {
        let mut arp = vec![0xff; 42];
        arp[12..14].copy_from_slice(&[0x08, 0x06]);
        arp
    } else {
        let mut udp = vec![0u8; ETH + 28 + 10];
        udp[12..14].copy_from_slice(&[0x08, 0x00]);
        let mut ip = Ipv4Packet::new_unchecked(&mut udp[ETH..]);
        ip.set_version(4);
        ip.set_header_len(20);
        ip.set_total_len(38);
        ip.set_hop_limit(64);
        ip.set_next_header(IpProtocol::Udp);
        ip.fill_checksum();
        udp
    }
}

/// One flow's data, its ISN, and the frames its sender put on the wire
/// (before the network's impairments).
struct Flow {
    key: Key,
    isn: u32,
    data: Vec<u8>,
    frames: Vec<Vec<u8>>,
}

fn make_flow(id: u16, rng: &mut ChaCha8Rng) -> Flow {
    let isn: u32 = if rng.gen_bool(0.3) { u32::MAX - rng.gen_range(0..5000) } else { rng.gen() };
    let len = rng.gen_range(0..8000usize);
    let data: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
    let mss = [100usize, 536, 1000, 1460][rng.gen_range(0..4)];
    let timestamps = rng.gen_bool(0.5);
    let (mut ack, mut window, mut ident) = (rng.gen::<u32>(), 8192u16, rng.gen::<u16>());
    let mut frames = Vec::new();
    let seg = |seq: u32, payload: &[u8], control: TcpControl, ack: u32, window: u16, ident: u16| {
        TcpFrame {
            seq,
            payload,
            control,
            ack: Some(ack),
            window,
            ident,
            timestamp: timestamps.then(|| TcpTimestampRepr::new(7, 9)),
            ..flow_frame(id)
        }
        .build()
    };
    frames.push(seg(isn.wrapping_sub(1), &[], TcpControl::Syn, 0, window, ident));
    let chunks: Vec<(usize, &[u8])> =
        data.chunks(mss).scan(0usize, |at, c| Some((std::mem::replace(at, *at + c.len()), c))).collect();
    let fin = rng.gen_bool(0.3);
    for (i, (at, chunk)) in chunks.iter().enumerate() {
        ident = ident.wrapping_add(1);
        if rng.gen_bool(0.1) {
            ack = ack.wrapping_add(rng.gen_range(1..3000));
        }
        if rng.gen_bool(0.05) {
            window = rng.gen_range(1000..20000);
        }
        let control = if fin && i + 1 == chunks.len() {
            TcpControl::Fin
        } else if rng.gen_bool(0.1) {
            TcpControl::Psh
        } else {
            TcpControl::None
        };
        let seq = isn.wrapping_add(*at as u32);
        frames.push(seg(seq, chunk, control, ack, window, ident));
        // A repacketised retransmission spanning this segment and the next.
        if i + 1 < chunks.len() && rng.gen_bool(0.03) {
            let end = (at + 2 * mss).min(data.len());
            frames.push(seg(seq, &data[*at..end], TcpControl::None, ack, window, ident));
        }
        if rng.gen_bool(0.05) {
            frames.push(seg(isn.wrapping_add(*at as u32), chunk, TcpControl::None, ack, window, ident));
        }
    }
    let src = Ipv4Address::new(10, 1, (id >> 8) as u8, id as u8);
    Flow { key: (src, Ipv4Address::new(10, 0, 0, 1), 1000 + id, 5001), isn, data, frames }
}

/// All flows' frames interleaved at random, with loss, duplication (a copy
/// later), neighbour swaps and unrelated traffic.
fn wire(flows: &[Flow], rng: &mut ChaCha8Rng) -> Vec<Vec<u8>> {
    let mut queues: Vec<std::collections::VecDeque<Vec<u8>>> =
        flows.iter().map(|f| f.frames.iter().cloned().collect()).collect();
    let mut out = Vec::new();
    let mut late: Vec<(usize, Vec<u8>)> = Vec::new();
    while queues.iter().any(|q| !q.is_empty()) {
        let live: Vec<usize> = (0..queues.len()).filter(|&i| !queues[i].is_empty()).collect();
        let q = live[rng.gen_range(0..live.len())];
        let f = queues[q].pop_front().expect("not empty");
        if rng.gen_bool(0.02) {
            out.push(other(rng));
        }
        if rng.gen_bool(0.04) {
            continue; // lost
        }
        if rng.gen_bool(0.04) {
            late.push((out.len() + rng.gen_range(1..40), f.clone()));
        }
        out.push(f);
        while let Some(i) = late.iter().position(|(at, _)| *at <= out.len()) {
            out.push(late.remove(i).1);
        }
    }
    out.extend(late.into_iter().map(|(_, f)| f));
    for i in 1..out.len() {
        if rng.gen_bool(0.08) {
            out.swap(i - 1, i);
        }
    }
    out
}

/// What each receiving socket gets: payload placed by sequence number, the
/// contiguous prefix from the ISN delivered.
fn sockets(frames: &[Vec<u8>], flows: &[Flow]) -> BTreeMap<Key, Vec<u8>> {
    let mut space: BTreeMap<Key, (u32, Vec<Option<u8>>)> =
        flows.iter().map(|f| (f.key, (f.isn, vec![None; f.data.len()]))).collect();
    for f in frames {
        let Ok(eth) = EthernetFrame::new_checked(&f[..]) else { continue };
        if eth.ethertype() != EthernetProtocol::Ipv4 {
            continue;
        }
        let Ok(ip) = Ipv4Packet::new_checked(eth.payload()) else { continue };
        if ip.next_header() != IpProtocol::Tcp {
            continue;
        }
        let tcp = TcpPacket::new_checked(ip.payload()).expect("a TCP header");
        let key = (ip.src_addr(), ip.dst_addr(), tcp.src_port(), tcp.dst_port());
        let (isn, buf) = space.get_mut(&key).expect("a known flow");
        let at = (tcp.seq_number().0 as u32).wrapping_sub(*isn) as usize;
        for (i, b) in tcp.payload().iter().enumerate() {
            let slot = &mut buf[at + i];
            assert!(slot.is_none_or(|old| old == *b), "flow {key:?}: two different bytes at offset {}", at + i);
            *slot = Some(*b);
        }
    }
    space.into_iter().map(|(k, (_, buf))| (k, buf.into_iter().map_while(|b| b).collect())).collect()
}

/// Check every TCP frame's lengths and checksums; return its payload length.
fn valid_payload(frame: &[u8]) -> usize {
    let eth = EthernetFrame::new_checked(frame).expect("Ethernet");
    if eth.ethertype() != EthernetProtocol::Ipv4 {
        return 0;
    }
    let ip = Ipv4Packet::new_checked(eth.payload()).expect("IPv4");
    assert!(ip.verify_checksum(), "IP checksum");
    if ip.next_header() != IpProtocol::Tcp {
        return 0;
    }
    assert!(usize::from(ip.total_len()) <= frame.len() - ETH, "IP total length within the frame");
    let tcp = TcpPacket::new_checked(ip.payload()).expect("TCP");
    assert!(tcp.verify_checksum(&IpAddress::Ipv4(ip.src_addr()), &IpAddress::Ipv4(ip.dst_addr())), "TCP checksum");
    tcp.payload().len()
}

fn frames_of(out: Vec<Coalesced>) -> Vec<Vec<u8>> {
    out.into_iter().map(|c| c.frame).collect()
}

fn check_case(seed: u64, nflows: u16) -> Result<(), TestCaseError> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let flows: Vec<Flow> = (0..nflows).map(|i| make_flow(i, &mut rng)).collect();
    let input = wire(&flows, &mut rng);
    let payload_in: usize = input.iter().map(|f| valid_payload(f)).sum();

    let plain = sockets(&input, &flows);
    for f in &flows {
        let got = &plain[&f.key];
        prop_assert_eq!(got.as_slice(), &f.data[..got.len()], "the reassembler delivers a prefix of what was sent");
    }

    let mut lro = NicLro::new(LroConfig::default());
    let mut out = Vec::new();
    for f in &input {
        lro.push(f.clone(), &mut out);
        prop_assert!(lro.held() <= 64 * 30 * 1024 / 54, "held frames bounded by the RB memory");
    }
    lro.flush(&mut out);
    prop_assert_eq!(lro.held(), 0);
    let lro_frames = frames_of(out);
    let lro_payload: usize = lro_frames.iter().map(|f| valid_payload(f)).sum();
    let stats = lro.stats();
    prop_assert_eq!(lro_payload as u64, payload_in as u64 - stats.duplicate_bytes, "payload conserved less duplicates");
    prop_assert!(stats.cam_max <= 64);
    prop_assert_eq!(stats.frames_out, lro_frames.len() as u64);
    prop_assert_eq!(sockets(&lro_frames, &flows), plain.clone(), "NIC LRO changed a socket's bytes");

    let mut gro = Gro::new(GroConfig::default());
    let mut out = Vec::new();
    for f in &input {
        gro.push(f.clone(), &mut out);
        if rng.gen_bool(0.1) {
            gro.flush(&mut out);
        }
    }
    gro.flush(&mut out);
    let gro_frames = frames_of(out);
    let gro_payload: usize = gro_frames.iter().map(|f| valid_payload(f)).sum();
    prop_assert_eq!(gro_payload, payload_in, "GRO drops nothing");
    prop_assert!(gro.stats().max_flows_held <= 64);
    prop_assert_eq!(sockets(&gro_frames, &flows), plain, "GRO changed a socket's bytes");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn every_socket_gets_the_same_bytes_with_lro_with_gro_and_without(seed in any::<u64>(), nflows in 1u16..100) {
        check_case(seed, nflows)?;
    }
}

#[test]
fn a_hundred_flows_overflow_the_cam_and_still_deliver_the_same_bytes() {
    let mut rng = ChaCha8Rng::seed_from_u64(42);
    let flows: Vec<Flow> = (0..100).map(|i| make_flow(i, &mut rng)).collect();
    let input = wire(&flows, &mut rng);
    let mut lro = NicLro::new(LroConfig { flush_packets: 1000, ..LroConfig::default() });
    let mut out = Vec::new();
    for f in &input {
        lro.push(f.clone(), &mut out);
    }
    lro.flush(&mut out);
    let s = lro.stats();
    assert_eq!(s.cam_max, 64, "the CAM fills");
    assert!(s.evictions > 0, "a full CAM evicts");
    assert!(s.classes.get(LroClass::Oop) > 0 && s.duplicates_dropped > 0, "reordering and duplicates exercised");
    assert!(s.aggregates > 0, "something merged");
    assert_eq!(sockets(&frames_of(out), &flows), sockets(&input, &flows));
}

#[test]
fn an_in_order_bulk_flow_coalesces_twenty_to_one() {
    // One flow, 200 full segments, no PSH: each moderation window of 20
    // frames becomes one frame of 20 segments.
    let data: Vec<u8> = (0..200 * 1460).map(|i| (i % 253) as u8).collect();
    let mut lro = NicLro::new(LroConfig::default());
    let mut out = Vec::new();
    for (i, chunk) in data.chunks(1460).enumerate() {
        let seq = (i * 1460) as u32;
        let f = TcpFrame { seq, payload: chunk, ack: Some(1), window: 100, ident: i as u16, ..flow_frame(1) }.build();
        let class = lro.push(f, &mut out);
        assert_eq!(class, Some(if i % 20 == 0 { LroClass::Bom } else { LroClass::Com }));
    }
    assert_eq!(out.len(), 10);
    assert!(out.iter().all(|c| c.segments == 20));
    let s = lro.stats();
    assert_eq!((s.frames_in, s.frames_out, s.flushes.window), (200, 10, 10));
    assert_eq!(s.classes.get(LroClass::Bom), 10);
}

#[test]
fn the_pcap_tool_writes_fewer_valid_frames_with_the_same_bytes() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let flows: Vec<Flow> = (0..8).map(|i| make_flow(i, &mut rng)).collect();
    let input: Vec<Vec<u8>> = flows.iter().flat_map(|f| f.frames.clone()).collect();
    let dir = std::env::temp_dir().join(format!("nicsim-lro-tool-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (src, nic, gro) = (dir.join("in.pcap"), dir.join("nic.pcap"), dir.join("gro.pcap"));
    let mut t = nicsim_core::probe::pcap::Trace::create(&src).unwrap();
    for (i, f) in input.iter().enumerate() {
        t.record(nicsim_core::engine::Time(i as u64 * 1_000_000), f).unwrap(); // 1 µs apart
    }
    t.finish().unwrap();
    let read = |p: &std::path::Path| nicsim_core::probe::pcap_read::parse(&std::fs::read(p).unwrap()).unwrap().records;
    let r = coalesce_pcap(&src, &nic, Engine::Nic).unwrap();
    let g = coalesce_pcap(&src, &gro, Engine::Gro { batch_gap_ns: 20_000 }).unwrap();
    assert_eq!((r.frames_in, g.frames_in), (input.len() as u64, input.len() as u64));
    assert_eq!(g.batches, 1, "frames 1 µs apart are one poll batch");
    let want = sockets(&input, &flows);
    for (path, report) in [(&nic, &r), (&gro, &g)] {
        let recs = read(path);
        assert_eq!(recs.len() as u64, report.frames_out);
        assert!(recs.len() < input.len(), "{path:?}: no coalescing");
        let frames: Vec<Vec<u8>> = recs.iter().map(|r| r.data.clone()).collect();
        for f in &frames {
            valid_payload(f);
        }
        assert_eq!(sockets(&frames, &flows), want, "{path:?}");
        // Every frame accounted for: merged, alone, passed through, dropped.
        let a = report.accounting;
        assert_eq!(a.merged + a.alone + a.passed_through + a.duplicates_dropped, report.frames_in, "{path:?}: {a:?}");
        assert_eq!(a.passed_through, report.passed.total());
        assert!(a.merged > 0);
        let per_flow: u64 = report.flows.iter().map(|f| f.frames_out).sum();
        assert!(per_flow <= report.frames_out);
        assert_eq!(report.flows.iter().map(|f| f.frames_in).sum::<u64>(), report.tcp_frames);
        // Stamped with the latest segment's input time: within the input's span.
        assert!(recs.iter().all(|r| r.time_ns < input.len() as u128 * 1000));
    }
    let missing = coalesce_pcap(&dir.join("nope.pcap"), &nic, Engine::Nic).unwrap_err().to_string();
    assert!(missing.contains("nope.pcap"), "{missing}");
    std::fs::write(&src, b"not a pcap at all, sorry").unwrap();
    let bad = coalesce_pcap(&src, &nic, Engine::Nic).unwrap_err().to_string();
    assert!(bad.contains("not a pcap or pcapng file"), "{bad}");
    std::fs::remove_dir_all(&dir).unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Damaged frames (any byte changed, cut anywhere) never make either
    /// engine panic, and every frame still comes out exactly once: merged
    /// frames' payload plus passed-through frames' payload is the input's
    /// less what LRO dropped as duplicates.
    #[test]
    fn damaged_frames_never_panic_and_nothing_is_lost(
        seed in any::<u64>(),
        damage in prop::collection::vec((any::<prop::sample::Index>(), any::<prop::sample::Index>(), any::<u8>(), any::<bool>()), 1..20),
    ) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let flows: Vec<Flow> = (0..3).map(|i| make_flow(i, &mut rng)).collect();
        let mut input = wire(&flows, &mut rng);
        for (frame, at, byte, cut) in &damage {
            let n = input.len();
            let f = &mut input[frame.index(n)];
            if f.is_empty() {
                continue;
            }
            let i = at.index(f.len());
            if *cut { f.truncate(i) } else { f[i] = *byte }
        }
        let mut lro = NicLro::new(LroConfig::default());
        let mut gro = Gro::new(GroConfig::default());
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for f in &input {
            lro.push(f.clone(), &mut a);
            gro.push(f.clone(), &mut b);
        }
        lro.flush(&mut a);
        gro.flush(&mut b);
        prop_assert_eq!(lro.stats().frames_out, a.len() as u64);
        prop_assert_eq!(gro.stats().frames_out, b.len() as u64);
        let segments = |out: &[Coalesced]| out.iter().map(|c| u64::from(c.segments)).sum::<u64>();
        prop_assert_eq!(segments(&a) + lro.stats().duplicates_dropped, input.len() as u64, "LRO: every frame accounted for");
        prop_assert_eq!(segments(&b), input.len() as u64, "GRO: every frame accounted for");
    }
}
