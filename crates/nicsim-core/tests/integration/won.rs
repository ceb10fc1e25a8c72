//! The Won study's set-up: a `won-simos-mips` host sends messages to an
//! echo node over UDP/IP or VIA. Checks integrity across fragmentation, that
//! the per-message breakdown adds up, and the physics the study describes
//! (where copies, fragmentation and defragmentation land).

use nicsim_core::api::Report;
use nicsim_core::sim::{EchoReport, MessageSide};
use nicsim_core::{run_toml, RunOptions};

use crate::ideal::{config_error, run};

/// IP MTU of the link, and the largest UDP payload and VIA fragment in one frame.
const MTU: u64 = 1500;
const UDP_ONE_FRAME: u64 = MTU - 20 - 8;
const VIA_FRAGMENT: u64 = MTU - 20;

fn scenario(protocol: &str, size: u64, messages: u64, client_lines: &str) -> String {
    format!(
        "[[hosts]]\nname = \"a\"\nprofile = \"won-simos-mips\"\n{client_lines}\n[[hosts]]\nname = \"b\"\n\
         [[links]]\nendpoints = [\"a\", \"b\"]\nrate = \"1Gbps\"\n\
         [workload.echo]\nclient = \"a\"\nserver = \"b\"\nprotocol = \"{protocol}\"\nsize = \"{size}B\"\nmessages = {messages}\n"
    )
}

fn echo(protocol: &str, size: u64) -> EchoReport {
    run(&scenario(protocol, size, 4, "")).echo.expect("an echo run reports its messages")
}

fn layer(side: &MessageSide, name: &str) -> u64 {
    side.cycles.get(name).copied().unwrap_or(0)
}

#[test]
fn via_messages_come_back_intact_across_fragmentation_and_the_pcap_shows_them() {
    for size in [1, VIA_FRAGMENT, VIA_FRAGMENT + 1, 4096, 10_000, 65_536] {
        let dir = std::env::temp_dir().join(format!("nicsim-won-via-{size}-{}", std::process::id()));
        let opts = RunOptions { pcap_dir: Some(dir.clone()), ..Default::default() };
        let r: Report = run_toml(&scenario("via", size, 3, ""), &opts).expect("runs");
        let e = r.echo.as_ref().unwrap();
        // 2 warm-up and 3 measured messages, every byte checked by the client.
        assert_eq!(r.flows.iter().map(|f| f.bytes).sum::<u64>(), 5 * size);
        let frames = size.div_ceil(VIA_FRAGMENT);
        for m in &e.messages {
            assert_eq!((m.send.frames, m.receive.frames), (frames, frames), "size {size}");
        }
        // On the wire: VIA frames only (no ARP, no IP), each direction carries
        // every message's bytes once, in frames of at most the MTU.
        let pcap = std::fs::read(dir.join(&r.pcaps[0])).unwrap();
        let (mut count, mut payload) = (0u64, 0u64);
        let mut at = 24;
        while at + 16 <= pcap.len() {
            let len = u32::from_le_bytes(pcap[at + 8..at + 12].try_into().unwrap()) as usize;
            let f = &pcap[at + 16..at + 16 + len];
            assert_eq!(u16::from_be_bytes([f[12], f[13]]), 0x88B5, "EtherType of every frame");
            assert!(len as u64 <= 14 + MTU);
            let off = u32::from_be_bytes(f[14 + 12..14 + 16].try_into().unwrap()) as u64;
            let total = u32::from_be_bytes(f[14 + 16..14 + 20].try_into().unwrap()) as u64;
            assert_eq!(total, size);
            payload += (len as u64 - 34).min(total - off);
            count += 1;
            at += 16 + len;
        }
        assert_eq!(count, 2 * 5 * frames, "size {size}");
        assert_eq!(payload, 2 * 5 * size, "size {size}");
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[test]
fn udp_messages_come_back_intact_through_ip_fragmentation() {
    for size in [1, UDP_ONE_FRAME, UDP_ONE_FRAME + 1, 8192] {
        let r = run(&scenario("udp", size, 3, ""));
        assert_eq!(r.flows.iter().map(|f| f.bytes).sum::<u64>(), 5 * size);
        let frames = (size + 8).div_ceil(MTU - 20);
        assert!(r.echo.unwrap().messages.iter().all(|m| m.send.frames == frames && m.receive.frames == frames));
    }
}

#[test]
fn each_breakdown_adds_up_to_its_total_and_a_single_frame_is_all_accounted_for() {
    for protocol in ["udp", "via"] {
        for size in [16, 1000, 4096] {
            let e = echo(protocol, size);
            assert_eq!(e.measured, 4);
            for m in &e.messages {
                for side in [&m.send, &m.receive] {
                    assert_eq!(side.cycles.values().sum::<u64>(), side.total, "{protocol} {size}");
                    assert_eq!(side.study.values().sum::<u64>(), side.total, "{protocol} {size}");
                    assert!(!side.study.contains_key("other"), "{protocol} {size}: {:?}", side.cycles);
                    assert!(layer(side, "dma") > 0 && layer(side, "interrupt") > 0 && layer(side, "driver") > 0);
                    if side.frames == 1 {
                        // One frame: nothing overlaps, so every elapsed cycle
                        // from the call (arrival) to the completion (return)
                        // is in exactly one layer.
                        assert_eq!(side.elapsed, side.total, "{protocol} {size}");
                    } else {
                        assert!(side.elapsed > 0);
                    }
                }
            }
            assert!((e.send.total - e.messages[0].send.total as f64).abs() < 1e-6, "identical messages");
        }
    }
}

#[test]
fn dma_cycles_are_the_frame_over_240_mb_per_s_at_the_clock() {
    let e = echo("via", 1000);
    let frame = 14 + 20 + 1000;
    // 200 MHz clock, 240 MB/s DMA engine (profile): bytes / 240e6 × 200e6.
    let want = frame as f64 / 240e6 * 200e6;
    assert!((layer(&e.messages[0].send, "dma") as f64 - want).abs() <= 1.0, "{:?}", e.messages[0].send.cycles);
    assert!((layer(&e.messages[0].receive, "dma") as f64 - want).abs() <= 1.0);
}

#[test]
fn via_send_has_no_copy_and_stays_near_constant_up_to_the_mtu_while_udp_grows_with_the_copy() {
    let (via_small, via_big) = (echo("via", 16), echo("via", 1400));
    let (udp_small, udp_big) = (echo("udp", 16), echo("udp", 1400));
    for e in [&via_small, &via_big] {
        let s = &e.messages[0].send;
        assert_eq!(
            layer(s, "copy") + layer(s, "syscall") + layer(s, "socket") + layer(s, "ip") + layer(s, "device"),
            0
        );
    }
    // Up to the MTU VIA's CPU work per send does not depend on the size:
    // only the DMA grows (zero copy: the NIC reads the registered buffer).
    let cpu = |e: &EchoReport| e.messages[0].send.total - layer(&e.messages[0].send, "dma");
    assert_eq!(cpu(&via_small), cpu(&via_big), "VIA send CPU cycles, 16 B vs 1400 B");
    // UDP's growth is the copy and checksum (charged to the study's IP layer).
    let udp_diff = udp_big.send.total - udp_small.send.total;
    let copy_diff =
        |e: &EchoReport| (layer(&e.messages[0].send, "copy") + layer(&e.messages[0].send, "checksum")) as f64;
    assert!(copy_diff(&udp_big) - copy_diff(&udp_small) > 0.5 * udp_diff, "UDP grows mostly by copy/checksum");
    assert!(udp_diff > 3.0 * (via_big.send.total - via_small.send.total));
    assert!(udp_big.send.study["ip"] > udp_small.send.study["ip"]);
    assert_eq!(udp_big.send.study["socket"], udp_small.send.study["socket"], "socket work is constant");
}

#[test]
fn fragmentation_and_defragmentation_appear_only_above_the_mtu() {
    let one = echo("udp", UDP_ONE_FRAME);
    let two = echo("udp", UDP_ONE_FRAME + 1);
    assert_eq!(layer(&one.messages[0].send, "ip_frag") + layer(&one.messages[0].receive, "ip_frag"), 0);
    assert!(layer(&two.messages[0].send, "ip_frag") > 0, "fragmentation on send, in IP");
    assert!(layer(&two.messages[0].receive, "ip_frag") > 0, "defragmentation on receive, in IP");
    // The receive copy is UDP's, the send copy IP's.
    assert!(two.receive.study["udp"] >= layer(&two.messages[0].receive, "copy") as f64);
    assert!(two.send.study["ip"] >= layer(&two.messages[0].send, "copy") as f64);
    let (v1, v2) = (echo("via", VIA_FRAGMENT), echo("via", VIA_FRAGMENT + 1));
    assert_eq!(v1.messages[0].receive.frames, 1);
    assert_eq!(v2.messages[0].receive.frames, 2);
    // Defragmentation cost per fragment appears in the transport only for
    // multi-frame messages: two frames cost more than twice the per-frame work.
    let per_frame = |e: &EchoReport| layer(&e.messages[0].receive, "via_transport") as f64 / e.receive.frames;
    assert!(per_frame(&v2) > per_frame(&v1));
}

#[test]
fn via_beats_udp_on_send_and_receive_at_every_size() {
    for size in [4, 256, 1400, 4096, 16_384] {
        let (u, v) = (echo("udp", size), echo("via", size));
        assert!(u.send.total / v.send.total > 1.0, "send at {size}: {} vs {}", u.send.total, v.send.total);
        assert!(u.receive.total / v.receive.total > 1.0, "receive at {size}");
    }
}

#[test]
fn echo_input_errors_name_the_field() {
    let e = config_error(&scenario("via", 0, 3, ""));
    assert_eq!(e.path, "workload.echo.size");
    let e = config_error(&scenario("via", 70_000, 3, ""));
    assert_eq!(e.path, "workload.echo.size");
    let e = config_error(&scenario("tcp", 100, 3, ""));
    assert_eq!(e.path, "workload.echo.protocol");
    let e = config_error(&scenario("udp", 100, 0, ""));
    assert_eq!(e.path, "workload.echo.messages");
    let with_profile =
        scenario("udp", 100, 3, "").replace("name = \"b\"\n", "name = \"b\"\nprofile = \"won-simos-mips\"\n");
    let e = config_error(&with_profile);
    assert_eq!(e.path, "hosts[1].profile");
    let e = config_error(&scenario("udp", 100, 3, "").replace("messages = 3", "messages = 3\ndelay = \"0s\""));
    assert_eq!(e.path, "workload.echo.delay");
    let e = config_error(&scenario("udp", 100, 3, "costs = { via_translate = { cycles = -1 } }"));
    assert_eq!(e.path, "hosts[0].costs.via_translate.cycles");
}

fn echo_at(protocol: &str, size: u64, clock: &str) -> EchoReport {
    run(&scenario(protocol, size, 3, &format!("cpu = {{ clock = \"{clock}\" }}"))).echo.expect("an echo run")
}

fn group(side: &MessageSide, name: &str) -> u64 {
    side.study.get(name).copied().unwrap_or(0)
}

#[test]
fn via_has_no_dev_layer_and_its_library_does_not_grow_with_the_size() {
    let (small, big) = (echo("via", 4), echo("via", 32_768));
    for e in [&small, &big] {
        for side in [&e.messages[0].send, &e.messages[0].receive] {
            assert_eq!(layer(side, "device"), 0, "no Dev layer on the M-VIA path");
            assert!(!side.study.contains_key("dev"), "{:?}", side.study);
            assert!(group(side, "vi_library") > 0);
        }
    }
    assert_eq!(group(&small.messages[0].send, "vi_library"), group(&big.messages[0].send, "vi_library"));
    assert_eq!(group(&small.messages[0].receive, "vi_library"), group(&big.messages[0].receive, "vi_library"));
    // The transport grows with the frames (translation, fragmentation) and
    // on receive with the bytes (the copy into registered memory).
    assert!(group(&big.messages[0].send, "transport") > 10 * group(&small.messages[0].send, "transport"));
    assert!(group(&big.messages[0].receive, "transport") > 50 * group(&small.messages[0].receive, "transport"));
}

#[test]
fn receives_are_handled_by_intr_and_dev_never_by_dev_drv() {
    for (protocol, size) in [("udp", 256), ("udp", 4096), ("via", 256), ("via", 4096)] {
        let e = echo(protocol, size);
        let r = &e.messages[0].receive;
        assert_eq!(group(r, "dev_drv"), 0, "{protocol} {size}: {:?}", r.study);
        // The driver's receive routine and refill run in the interrupt handler.
        assert!(group(r, "intr") > layer(r, "interrupt"), "{protocol} {size}");
        assert_eq!(group(r, "intr"), layer(r, "interrupt") + layer(r, "driver"));
        // On send the driver's DMA set-up is Dev Drv; its transmit completions Intr.
        let s = &e.messages[0].send;
        assert!(group(s, "dev_drv") > 0 && group(s, "dev_drv") < layer(s, "driver"));
        assert_eq!(group(s, "dev_drv") + group(s, "intr"), layer(s, "driver") + layer(s, "interrupt"));
    }
    // M-VIA's transmit completion frees no sk_buff: less Intr per frame than UDP's.
    let (u, v) = (echo("udp", 256), echo("via", 256));
    assert!(group(&v.messages[0].send, "intr") < group(&u.messages[0].send, "intr"));
}

#[test]
fn defragmentation_copies_the_datagram_in_ip_so_udp_copies_from_the_cache() {
    let (one, two) = (echo("udp", UDP_ONE_FRAME), echo("udp", 2 * UDP_ONE_FRAME));
    let (r1, r2) = (&one.messages[0].receive, &two.messages[0].receive);
    // ip_glue copies the whole datagram from where DMA left it: IP's
    // receive work jumps above the MTU by more than the per-fragment work.
    assert!(group(r2, "ip") > 10 * group(r1, "ip"), "{:?} vs {:?}", r2.study, r1.study);
    // ...so udp_recvmsg then copies twice the bytes for less than a
    // single frame's cold copy: the glued datagram is in the cache.
    assert!(layer(r2, "copy") < layer(r1, "copy"), "{} vs {}", layer(r2, "copy"), layer(r1, "copy"));
}

#[test]
fn only_dma_cycles_depend_on_the_clock() {
    for protocol in ["udp", "via"] {
        for size in [4, 1472, 4096] {
            let (slow, fast) = (echo_at(protocol, size, "100MHz"), echo_at(protocol, size, "400MHz"));
            for (a, b) in [
                (&slow.messages[0].send, &fast.messages[0].send),
                (&slow.messages[0].receive, &fast.messages[0].receive),
            ] {
                for (name, v) in &a.cycles {
                    if *name == "dma" {
                        // bytes / 240 MB/s at 4x the clock: 4x the cycles (whole cycles per frame).
                        let (lo, hi) = (4 * v, b.cycles[name]);
                        assert!(hi.abs_diff(lo) <= 4 * a.frames, "{protocol} {size} dma {lo} vs {hi}");
                    } else {
                        assert_eq!(
                            b.cycles.get(name),
                            Some(v),
                            "{protocol} {size} {name}: CPU cycles must not move with the clock"
                        );
                    }
                }
            }
        }
    }
}
