//! Receive coalescing in the timed host (`nic.lro`): the NIC's LRO engine
//! on its own core, and GRO / software LRO in the driver. Whatever merges
//! the segments, the stream arrives intact, fewer frames climb the host's
//! stack, and the receiving host spends fewer cycles per byte.

use nicsim_core::api::Report;
use nicsim_core::sim::TimingReport;

use crate::ideal::{bulk, config_error, run};

/// Two modern hosts over 10 GbE, MTU 1500; `nic` and `tcp` are inline tables' fields.
/// TSO is off and, unless `nic` says otherwise, so is coalescing, with
/// GRO flushed at the end of every batch: what these tests compare.
fn pair(nic: &str, tcp: &str, bytes: &str) -> String {
    let mut fields = vec!["tso = false".to_string()];
    if !nic.contains("lro =") {
        fields.push("lro = \"off\"".into());
    }
    if !nic.contains("gro_flush") {
        fields.push("gro_flush = \"batch\"".into());
    }
    if !nic.is_empty() {
        fields.push(nic.to_string());
    }
    let nic = fields.join(", ");
    let host = |name: &str| {
        format!(
            "[[hosts]]\nname = \"{name}\"\nprofile = \"modern-x86-pcie\"\n\
             tcp = {{ rx_buffer = \"4MiB\", tx_buffer = \"4MiB\"{tcp} }}\nnic = {{ {nic} }}\n"
        )
    };
    format!(
        "{}{}[[links]]\nendpoints = [\"a\", \"b\"]\nrate = \"10Gbps\"\npropagation = \"500ns\"\nmtu = \"1500B\"\n{}",
        host("a"),
        host("b"),
        bulk(bytes)
    )
}

fn receiver(r: &Report) -> &TimingReport {
    r.hosts[1].timing.as_ref().expect("timed")
}

/// Receive-path cycles of the receiving host per payload byte.
fn rx_cycles_per_byte(r: &Report) -> f64 {
    receiver(r).cycles_receive.values().sum::<u64>() as f64 / r.summary.payload_bytes as f64
}

#[test]
fn every_mode_delivers_the_stream_intact_with_fewer_frames_up_the_stack() {
    let off = run(&pair("lro = \"off\"", "", "8MiB"));
    assert!(off.summary.verified);
    for mode in ["nic", "gro", "software"] {
        let r = run(&pair(&format!("lro = \"{mode}\""), "", "8MiB"));
        assert!(r.summary.verified, "{mode}: stream not intact");
        assert_eq!(r.summary.payload_bytes, 8 << 20, "{mode}");
        assert_eq!(r.summary.retransmissions, 0, "{mode}");
        // Every data segment on the wire reached the engine; the stack saw
        // fewer than half as many frames. (How many GRO merges depends on
        // how long the receiver's polls take: about three a frame in the
        // first 8 MiB with modern-x86-pcie's costs.)
        let into_stack = r.hosts[1].stats.rx_frames;
        assert!(
            into_stack * 2 < r.summary.data_segments,
            "{mode}: {into_stack} frames reached the stack for {} segments",
            r.summary.data_segments
        );
        let t = receiver(&r);
        let (frames_in, bytes_in, bytes_out) = match (&t.lro, &t.gro) {
            (Some(l), None) => (l.engine.frames_in, l.engine.bytes_in, l.engine.bytes_out),
            (None, Some(g)) => (g.frames_in, g.bytes_in, g.bytes_out),
            other => panic!("{mode}: engine reports {:?}", (other.0.is_some(), other.1.is_some())),
        };
        assert!(frames_in >= r.summary.data_segments, "{mode}: engine saw {frames_in} frames");
        // Merging drops the repeated headers, never payload: what leaves
        // the engine is less than what entered, by at least the headers of
        // the frames that disappeared and at most all their headers.
        assert!(bytes_out < bytes_in, "{mode}");
        assert!(bytes_in - bytes_out <= 66 * frames_in, "{mode}: {} bytes lost in merging", bytes_in - bytes_out);
    }
}

#[test]
fn coalescing_cuts_the_receivers_cycles_per_byte_most_on_the_nic() {
    let per_byte = |mode: &str| rx_cycles_per_byte(&run(&pair(&format!("lro = \"{mode}\""), "", "16MiB")));
    let (off, nic, gro, sw) = (per_byte("off"), per_byte("nic"), per_byte("gro"), per_byte("software"));
    assert!(gro < off && sw < off && nic < off, "off {off:.2}, nic {nic:.2}, gro {gro:.2}, software {sw:.2}");
    // The NIC engine moves the per-segment work off the host entirely.
    assert!(nic < gro && nic < sw, "off {off:.2}, nic {nic:.2}, gro {gro:.2}, software {sw:.2}");
    assert!(nic < off / 3.0, "NIC LRO left {nic:.2} of {off:.2} cycles per byte");
}

#[test]
fn a_nic_core_too_slow_for_the_line_overruns_its_receive_buffers() {
    // About 56 cycles a 1500-byte frame (a COM: 19 instructions around the
    // 37-cycle RBI-to-RB move at a 5x DMA clock): at 1 GHz a frame takes
    // ~0.06 us against 1.23 us between frames at 10 Gb/s; at 40 MHz ~1.4 us.
    // (Much slower and the sender, which keeps the line full, loses nearly
    // every frame; smoltcp, without SACK and with a 1 s minimum RTO, then
    // takes longer than the run's time limit to deliver 1 MiB.)
    let fast = run(&pair("lro = \"nic\", lro_engine = { core_clock = \"1GHz\" }", "", "1MiB"));
    let f = &receiver(&fast).lro.as_ref().expect("engine").core;
    assert_eq!(f.rbi_overruns, 0);
    assert!(fast.summary.verified);
    let slow = run(&pair("lro = \"nic\", lro_engine = { core_clock = \"40MHz\" }", "", "1MiB"));
    let s = &receiver(&slow).lro.as_ref().expect("engine").core;
    assert!(s.rbi_overruns > 0, "a 40 MHz core kept up with 10 Gb/s");
    // TCP recovers what the NIC dropped.
    assert!(slow.summary.verified);
    assert!(slow.summary.retransmissions > 0);
    // Same frames, same program: the same busy cycles per frame at any clock.
    let per = |c: &nicsim_core::sim::NicCoreStats| c.busy_cycles as f64 / c.frames as f64;
    assert!((per(f) - per(s)).abs() / per(f) < 0.1, "{} vs {}", per(f), per(s));
}

#[test]
fn acking_each_merged_segment_acks_more_and_costs_a_window_limited_flow_only_that_work() {
    // A 64 KiB window holds about two merged frames. Under `delay` the
    // first of them waits for smoltcp's 10 ms timer unless a window update
    // from the reader's copy comes first; whether one does depends on the
    // timing (with session 25's costs one stall in 8 MiB cost `delay` 44 %
    // of its rate; with session 26's the window updates always came first).
    // What does not depend on it: the Linux policy ACKs every merged frame
    // of two or more segments, so the sender gets more ACKs. Each of them is
    // work on both hosts (sending it, and the sender's TCP input), and a
    // window-limited flow waits for it, so the flow may take longer, but by
    // no more than that extra work: never a timer's stall (with session
    // 35's costs 5.21 against 5.40 Gb/s, 0.46 ms longer for 0.88 ms more
    // busy time).
    let tcp = |policy: &str| format!(", rx_buffer = \"64KiB\", coalesced_ack = \"{policy}\"");
    let pair64 = |policy: &str| pair("lro = \"nic\"", &tcp(policy), "8MiB").replacen("rx_buffer = \"4MiB\", ", "", 2);
    let linux = run(&pair64("linux"));
    let delay = run(&pair64("delay"));
    assert!(linux.summary.verified && delay.summary.verified);
    let busy = |r: &Report| -> f64 {
        r.hosts.iter().flat_map(|h| &h.timing.as_ref().expect("timed").cores).map(|c| c.busy_s).sum()
    };
    let longer = linux.summary.duration_s - delay.summary.duration_s;
    let more_work = busy(&linux) - busy(&delay);
    assert!(
        longer <= more_work,
        "linux policy {:.2} Gb/s vs delayed {:.2} Gb/s: {:.0} us longer for {:.0} us more busy time",
        linux.summary.goodput_bps / 1e9,
        delay.summary.goodput_bps / 1e9,
        longer * 1e6,
        more_work * 1e6
    );
    // The sender got more ACKs under the Linux policy.
    let (la, da) = (linux.hosts[0].stats.rx_frames, delay.hosts[0].stats.rx_frames);
    assert!(la > da + da / 10, "{la} ACKs under the Linux policy, {da} delayed");
}

#[test]
fn bad_coalescing_knobs_name_their_field() {
    let e = config_error(&pair("lro = \"sometimes\"", "", "1MiB"));
    assert!(e.to_string().contains("hosts[0].nic.lro"), "{e}");
    let e = config_error(&pair("lro = \"nic\", lro_engine = { flush_packets = 0 }", "", "1MiB"));
    assert!(e.to_string().contains("hosts[0].nic.lro_engine.flush_packets"), "{e}");
    let e = config_error(&pair("lro_engine = { core_clock = \"10kHz\" }", "", "1MiB"));
    assert!(e.to_string().contains("hosts[0].nic.lro_engine.core_clock"), "{e}");
    let zc = pair("lro = \"gro\"", "", "1MiB").replacen(
        "nic = {",
        "zero_copy = { fragment = true, speculate = true }\nnic = {",
        1,
    );
    let e = config_error(&zc);
    assert!(e.to_string().contains("hosts[0].zero_copy.speculate"), "{e}");
    let e = config_error(&pair("", ", coalesced_ack = \"never\"", "1MiB"));
    assert!(e.to_string().contains("hosts[0].tcp.coalesced_ack"), "{e}");
}
