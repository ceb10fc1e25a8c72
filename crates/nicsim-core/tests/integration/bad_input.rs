//! Bad input: a table of malformed scenarios and profile overrides, one row
//! per field kind and failure (bad unit, negative, zero, wrong type, unknown
//! field or name, out of range, absurd), each checked for the exact field
//! path and a substring of the reason. Then absurd-but-valid values, which
//! must end (at the time limit, with an explicit error) rather than hang or
//! exhaust memory.

use std::time::Instant;

use nicsim_core::{run_toml, Error, RunOptions};

use crate::ideal::config_error;

const BULK: &str = "[workload.bulk]\nfrom = \"a\"\nto = \"b\"\nbytes = \"1MB\"\n";

/// Two hosts on one link; `host` lines go to host `a` only, `link` lines to
/// the link, `tail` after the workload (a `[run]` table).
fn scenario(host: &str, link: &str, workload: &str, tail: &str) -> String {
    format!(
        "[[hosts]]\nname = \"a\"\n{host}\n[[hosts]]\nname = \"b\"\n[[links]]\nendpoints = [\"a\", \"b\"]\n\
         {link}\n{workload}\n{tail}\n"
    )
}

fn host(lines: &str) -> String {
    scenario(lines, "", BULK, "")
}
fn link(lines: &str) -> String {
    scenario("", lines, BULK, "")
}
fn workload(text: &str) -> String {
    scenario("", "", text, "")
}
fn run_table(lines: &str) -> String {
    scenario("", "", BULK, &format!("[run]\n{lines}"))
}
fn timed(lines: &str) -> String {
    host(&format!("profile = \"kurmann-pii-400\"\n{lines}"))
}
fn udp(fields: &str) -> String {
    workload(&format!("[workload.udp_stream]\nfrom = \"a\"\nto = \"b\"\n{fields}\n"))
}
fn rr(fields: &str) -> String {
    workload(&format!("[workload.request_response]\nclient = \"a\"\nserver = \"b\"\n{fields}\n"))
}
fn netpipe(fields: &str) -> String {
    workload(&format!("[workload.netpipe]\nclient = \"a\"\nserver = \"b\"\n{fields}\n"))
}

/// (what is wrong, scenario text, expected error path, expected reason substring)
fn table() -> Vec<(&'static str, String, &'static str, &'static str)> {
    vec![
        // ------------------------------------------------ units
        ("bandwidth with a bad suffix", link("rate = \"1Gbs\""), "links[0].rate", "unknown unit \"Gbs\""),
        ("bandwidth in bytes per second, ambiguous", link("rate = \"1GBps\""), "links[0].rate", "ambiguous unit"),
        ("size in bits", link("mtu = \"1500b\""), "links[0].mtu", "sizes are in bytes"),
        ("size with no unit", link("mtu = 1500"), "links[0].mtu", "missing unit"),
        ("duration in minutes or milli", link("propagation = \"5m\""), "links[0].propagation", "ambiguous unit"),
        ("duration with an exponent", link("propagation = \"1e3ns\""), "links[0].propagation", "unknown unit"),
        ("duration finer than a picosecond", link("propagation = \"0.5ps\""), "links[0].propagation", "whole number"),
        ("frequency in lower case", timed("cpu = { clock = \"400mhz\" }"), "hosts[0].cpu.clock", "write MHz"),
        (
            "size too large for 64 bits",
            host("tcp = { rx_buffer = \"99999999999GiB\" }"),
            "hosts[0].tcp.rx_buffer",
            "too large",
        ),
        // ------------------------------------------------ negative
        ("negative duration", link("propagation = \"-5ns\""), "links[0].propagation", "expected a duration"),
        ("negative queue", link("queue = -1"), "links[0].queue", "invalid value: integer `-1`"),
        (
            "negative probability",
            link("impairments = { loss = -0.1 }"),
            "links[0].impairments.loss",
            "probability between 0 and 1, got -0.1",
        ),
        (
            "NaN probability",
            link("impairments = { corrupt = nan }"),
            "links[0].impairments.corrupt",
            "probability between 0 and 1, got NaN",
        ),
        ("negative seed", "seed = -1\n".to_string() + &link(""), "seed", "invalid value: integer `-1`"),
        ("negative transactions", rr("transactions = -5"), "workload.request_response.transactions", "invalid value"),
        // ------------------------------------------------ zero where positive is needed
        ("zero-rate link", link("rate = \"0bps\""), "links[0].rate", "must be 10Mbps to 400Gbps, got 0bps"),
        ("MTU 0", link("mtu = \"0B\""), "links[0].mtu", "must be 576B to 9216B, got 0B"),
        ("zero-length queue", link("queue = 0"), "links[0].queue", "must be 1 to 1000000 frames"),
        (
            "zero bytes to send",
            workload("[workload.bulk]\nfrom = \"a\"\nto = \"b\"\nbytes = \"0B\"\n"),
            "workload.bulk.bytes",
            "above zero",
        ),
        (
            "a warm-up without a duration",
            workload("[workload.bulk]\nfrom = \"a\"\nto = \"b\"\nbytes = \"1MB\"\nomit = \"1ms\"\n"),
            "workload.bulk.omit",
            "needs duration",
        ),
        (
            "a warm-up of a month",
            workload("[workload.bulk]\nfrom = \"a\"\nto = \"b\"\nduration = \"1s\"\nomit = \"2592000s\"\n"),
            "workload.bulk.omit",
            "at most 1000000s",
        ),
        (
            "zero write size",
            workload("[workload.bulk]\nfrom = \"a\"\nto = \"b\"\nbytes = \"1MB\"\nwrite_size = \"0B\"\n"),
            "workload.bulk.write_size",
            "must be 1B",
        ),
        ("zero transactions", rr("transactions = 0"), "workload.request_response.transactions", "at least 1"),
        ("zero datagrams", udp("count = 0"), "workload.udp_stream.count", "above zero"),
        ("zero-rate UDP stream", udp("count = 5\nrate = \"0bps\""), "workload.udp_stream.rate", "above zero"),
        ("zero time limit", run_table("time_limit = \"0s\""), "run.time_limit", "above zero"),
        ("zero port", rr("port = 0"), "workload.request_response.port", "1 to 65535"),
        (
            "zero reorder delay while reordering",
            link("impairments = { reorder = 0.1, reorder_delay = \"0s\" }"),
            "links[0].impairments.reorder_delay",
            "above zero",
        ),
        ("zero CPU clock", timed("cpu = { clock = \"0Hz\" }"), "hosts[0].cpu.clock", "must be 1MHz to 100GHz"),
        ("zero cores", timed("cpu = { cores = 0 }"), "hosts[0].cpu.cores", "must be 1 to 256"),
        (
            "zero memory bandwidth",
            timed("memory = { bandwidth = \"0bps\" }"),
            "hosts[0].memory.bandwidth",
            "above zero",
        ),
        ("zero NAPI budget", timed("nic = { napi_budget = 0 }"), "hosts[0].nic.napi_budget", "at least 1"),
        ("zero NetPIPE stop time", netpipe("stop_time = \"0s\""), "workload.netpipe.stop_time", "above zero"),
        // ------------------------------------------------ wrong type
        ("rate as a boolean", link("rate = true"), "links[0].rate", "invalid type: boolean `true`"),
        (
            "nagle as an unknown word",
            host("tcp = { nagle = \"yes\" }"),
            "hosts[0].tcp.nagle",
            "must be true, false, \"classic\" or \"minshall\", got \"yes\"",
        ),
        ("nagle as a number", host("tcp = { nagle = 1 }"), "hosts[0].tcp.nagle", "invalid type: integer `1`"),
        ("hosts as a number", "hosts = 3\nlinks = []\n".to_string() + BULK, "hosts", "invalid type: integer `3`"),
        (
            "endpoints with one name",
            link("").replace("endpoints = [\"a\", \"b\"]", "endpoints = [\"a\"]"),
            "links[0].endpoints",
            "invalid length 1",
        ),
        ("count as a float", udp("count = 1e12"), "workload.udp_stream.count", "invalid type: floating point"),
        ("profile as a table", host("profile = { name = \"x\" }"), "hosts[0].profile", "invalid type: map"),
        ("override as a string", timed("nic = \"fast\""), "hosts[0].nic", "invalid type: string \"fast\""),
        ("delayed ACK as a word", host("tcp = { delayed_ack = \"soon\" }"), "hosts[0].tcp.delayed_ack", "(or \"off\")"),
        (
            "unknown congestion control",
            host("tcp = { congestion_control = \"bbr\" }"),
            "hosts[0].tcp.congestion_control",
            "unknown variant `bbr`",
        ),
        ("unknown bus kind", timed("bus = { kind = \"isa\" }"), "hosts[0].bus.kind", "unknown variant `isa`"),
        // ------------------------------------------------ unknown field
        ("unknown top-level field", "colour = \"red\"\n".to_string() + &link(""), "colour", "unknown field `colour`"),
        ("unknown link field", link("speed = \"1Gbps\""), "links[0].speed", "unknown field `speed`"),
        (
            "unknown impairment",
            link("impairments = { jitter = 0.1 }"),
            "links[0].impairments.jitter",
            "unknown field `jitter`",
        ),
        ("unknown workload kind", workload("[workload.ping]\nfrom = \"a\"\n"), "workload", "unknown variant `ping`"),
        ("unknown workload field", udp("count = 5\nburst = 3"), "workload.udp_stream.burst", "unknown field `burst`"),
        (
            "unknown NIC override",
            timed("nic = { rx_rings = 256 }"),
            "hosts[0].nic.rx_rings",
            "unknown field `rx_rings`",
        ),
        (
            "unknown moderation knob",
            timed("nic = { moderation = { itr = 8000 } }"),
            "hosts[0].nic.moderation.itr",
            "unknown field `itr`",
        ),
        ("knob of another bus kind", timed("bus = { lanes = 4 }"), "hosts[0].bus.lanes", "not a knob of kind \"pci\""),
        ("unknown run field", run_table("wall_limit = \"1s\""), "run.wall_limit", "unknown field `wall_limit`"),
        ("missing workload", link("").replace(BULK, ""), "", "missing field `workload`"),
        // ------------------------------------------------ unknown names
        (
            "link to an unknown host",
            link("").replace("[\"a\", \"b\"]", "[\"a\", \"c\"]"),
            "links[0].endpoints[1]",
            "no host or switch named \"c\"",
        ),
        (
            "workload to an unknown host",
            workload("[workload.bulk]\nfrom = \"a\"\nto = \"z\"\nbytes = \"1MB\"\n"),
            "workload.bulk.to",
            "no host named \"z\"",
        ),
        (
            "unknown profile",
            host("profile = \"pentium-pro\""),
            "hosts[0].profile",
            "no built-in profile \"pentium-pro\"",
        ),
        (
            "override without a profile",
            host("cpu = { clock = \"1GHz\" }"),
            "hosts[0].cpu",
            "overrides a timing profile",
        ),
        (
            "duplicate host name",
            link("").replace("name = \"b\"", "name = \"a\""),
            "hosts[1].name",
            "duplicate host name",
        ),
        (
            "host name with a space",
            link("").replace("name = \"a\"", "name = \"a b\""),
            "hosts[0].name",
            "letters, digits",
        ),
        // ------------------------------------------------ out of range and absurd
        ("MTU above 65535", link("mtu = \"70000B\""), "links[0].mtu", "must be 576B to 9216B, got 70kB"),
        ("MTU just above 9216", link("mtu = \"9217B\""), "links[0].mtu", "must be 576B to 9216B, got 9217B"),
        ("rate above 400 Gb/s", link("rate = \"1Tbps\""), "links[0].rate", "must be 10Mbps to 400Gbps"),
        ("jumbo frames at 100 Mb/s", link("rate = \"100Mbps\"\nmtu = \"9000B\""), "links[0].mtu", "jumbo frames"),
        ("queue of a billion frames", link("queue = 1000000000"), "links[0].queue", "must be 1 to 1000000 frames"),
        (
            "probability above one",
            link("impairments = { duplicate = 1.5 }"),
            "links[0].impairments.duplicate",
            "got 1.5",
        ),
        ("propagation of a month", link("propagation = \"2592000s\""), "links[0].propagation", "at most 10s"),
        (
            "reorder delay of a month",
            link("impairments = { reorder = 0.1, reorder_delay = \"2592000s\" }"),
            "links[0].impairments.reorder_delay",
            "at most 10s",
        ),
        ("time limit of 200 days", run_table("time_limit = \"17280000s\""), "run.time_limit", "at most 1000000s"),
        ("ARP neither cold nor warm", run_table("arp = \"hot\""), "run.arp", "unknown variant `hot`"),
        (
            "a billion CPU sample bins",
            scenario(
                "profile = \"kurmann-pii-400\"",
                "",
                BULK,
                "[run]\nsample_interval = \"1us\"\ntime_limit = \"1000s\"",
            ),
            "run.sample_interval",
            "1000000000 bins for each of 1 timed CPU cores",
        ),
        ("IP address out of range", host("ip = \"10.0.0.300\""), "hosts[0].ip", "not an IPv4 address"),
        ("prefix longer than 30", host("ip = \"10.0.0.1/31\""), "hosts[0].ip", "prefix length must be 8 to 30"),
        ("broadcast address", host("ip = \"255.255.255.255/8\""), "hosts[0].ip", "not a unicast host address"),
        (
            "socket buffer of one byte",
            host("tcp = { rx_buffer = \"1B\" }"),
            "hosts[0].tcp.rx_buffer",
            "must be 1KiB to 1GiB",
        ),
        (
            "socket buffer of 1 TB",
            host("udp = { tx_buffer = \"1000GB\" }"),
            "hosts[0].udp.tx_buffer",
            "must be 1KiB to 1GiB",
        ),
        ("MSS of 100 bytes", host("tcp = { mss = \"100B\" }"), "hosts[0].tcp.mss", "must be 536B to 9176B"),
        ("port above 65535", rr("port = 70000"), "workload.request_response.port", "invalid value: integer `70000`"),
        (
            "datagram above 64 KiB",
            udp("count = 5\nsize = \"70000B\""),
            "workload.udp_stream.size",
            "must be 8B to 65507B",
        ),
        (
            "UDP request of 0 bytes",
            workload("[workload.udp_rr]\nclient = \"a\"\nserver = \"b\"\nrequest = \"0B\"\n"),
            "workload.udp_rr.request",
            "must be 1B",
        ),
        (
            "NetPIPE upper below lower",
            netpipe("lower = \"1kB\"\nupper = \"10B\""),
            "workload.netpipe.upper",
            "must be from lower",
        ),
        (
            "UDP linger of a month",
            udp("count = 5\nlinger = \"2592000s\""),
            "workload.udp_stream.linger",
            "at most 1000000s",
        ),
        (
            "bulk duration of a month",
            workload("[workload.bulk]\nfrom = \"a\"\nto = \"b\"\nduration = \"2592000s\"\n"),
            "workload.bulk.duration",
            "at most 1000000s",
        ),
        (
            "ring not a power of two",
            timed("nic = { rx_ring = 100 }"),
            "hosts[0].nic.rx_ring",
            "power of two from 8 to 65536, got 100",
        ),
        (
            "ring of 2^20 descriptors",
            timed("nic = { tx_ring = 1048576 }"),
            "hosts[0].nic.tx_ring",
            "power of two from 8 to 65536",
        ),
        (
            "no transmit DMA at all",
            timed("nic = { tx_dma_outstanding = 0 }"),
            "hosts[0].nic.tx_dma_outstanding",
            "must be 1 to 256, got 0",
        ),
        (
            "receive FIFO below one jumbo frame",
            timed("nic = { rx_fifo = \"2kB\" }"),
            "hosts[0].nic.rx_fifo",
            "at least one jumbo frame",
        ),
        (
            "moderation delay of a month",
            timed("nic = { moderation = { rx_delay = \"2592000s\" } }"),
            "hosts[0].nic.moderation.rx_delay",
            "at most 1s",
        ),
        ("application on a missing core", timed("cpu = { app_core = 4 }"), "hosts[0].cpu.app_core", "does not exist"),
        (
            "a queueing discipline's quantum of ten bytes",
            timed("costs = { qdisc_quantum = \"10B\" }"),
            "hosts[0].costs.qdisc_quantum",
            "must be 64B to 1MiB",
        ),
        (
            "TCP input's start dearer than the whole input",
            timed("costs = { tcp_rx = { cycles = 400, mem = 0 }, tcp_rx_demux = { cycles = 500 } }"),
            "hosts[0].costs.tcp_rx_demux",
            "at most costs.tcp_rx (400 cycles), got 500 cycles",
        ),
        (
            "a wake-up of a second",
            timed("cpu = { wake_latency = \"1s\" }"),
            "hosts[0].cpu.wake_latency",
            "must be at most 1ms",
        ),
        (
            "a P-state turbo below the floor",
            timed("cpu = { pstate = { min = \"2GHz\", turbo = \"1GHz\" } }"),
            "hosts[0].cpu.pstate.turbo",
            "at least min",
        ),
        (
            "a P-state floor between steps",
            timed("cpu = { pstate = { min = \"1.05GHz\", turbo = \"4GHz\" } }"),
            "hosts[0].cpu.pstate.min",
            "multiple of 100MHz",
        ),
        (
            "a P-state sample every nanosecond",
            timed("cpu = { pstate = { min = \"100MHz\", turbo = \"10GHz\", interval = \"1ns\" } }"),
            "hosts[0].cpu.pstate.interval",
            "must be 100us to 1s",
        ),
        (
            "memory latency of a million cycles",
            timed("memory = { latency = 1000000 }"),
            "hosts[0].memory.latency",
            "at most 100000 cycles",
        ),
        (
            "TSO without checksum offload",
            timed("nic = { tso = true, checksum_offload = false }"),
            "hosts[0].nic.tso",
            "needs nic.checksum_offload",
        ),
        ("PCIe generation 9", timed("bus = { kind = \"pcie\", gen = 9, lanes = 8 }"), "hosts[0].bus.gen", ""),
        // ------------------------------------------------ zero-copy (Kurmann)
        (
            "zero-copy knob misspelt",
            timed("zero_copy = { fragmnet = true }"),
            "hosts[0].zero_copy.fragmnet",
            "unknown field",
        ),
        ("zero-copy OS unknown", timed("zero_copy = { os = \"mmap\" }"), "hosts[0].zero_copy.os", "unknown variant"),
        (
            // Found by the scenario fuzz target: the host's fragment-train check ran on the MTU before
            // the link's range check, and subtracted the headers from 15 bytes.
            "zero-copy fragmentation on a link with a tiny MTU",
            scenario(
                "profile = \"kurmann-pii-400\"\nzero_copy = { fragment = true, speculate = true }",
                "mtu = \"15B\"",
                BULK,
                "",
            ),
            "links[0].mtu",
            "must be 576B to 9216B, got 15B",
        ),
        (
            "zero-copy with GRO",
            timed("zero_copy = { os = \"remap\" }\nnic = { lro = \"gro\" }"),
            "hosts[0].nic.lro",
            "one receive offload engine",
        ),
        (
            "zero-copy admission control with TSO",
            timed("zero_copy = { admission = \"explicit\" }\nnic = { tso = true }"),
            "hosts[0].nic.tso",
            "zero-copy driver gates the frames",
        ),
        ("an unknown qdisc", timed("nic = { qdisc = \"red\" }"), "hosts[0].nic.qdisc", "unknown variant `red`"),
        (
            "zero-copy page not a power of two",
            timed("zero_copy = { page = \"3000B\" }"),
            "hosts[0].zero_copy.page",
            "power of two",
        ),
        (
            "match CAM without speculation",
            timed("zero_copy = { cam = \"2way\" }"),
            "hosts[0].zero_copy.cam",
            "needs zero_copy.speculate",
        ),
        (
            "match CAM of 3 ways",
            timed("zero_copy = { speculate = true, cam = \"3way\" }"),
            "hosts[0].zero_copy.cam",
            "unknown variant",
        ),
        (
            "interference with no window",
            timed("zero_copy = { interference = { frames = 5 } }"),
            "hosts[0].zero_copy.interference.over",
            "must be above zero",
        ),
        (
            "speculation timeout of zero",
            timed("zero_copy = { timeout = \"0s\" }"),
            "hosts[0].zero_copy.timeout",
            "above zero",
        ),
        (
            "driver fragmentation with TSO",
            timed("zero_copy = { fragment = true }\nnic = { tso = true }"),
            "hosts[0].zero_copy.fragment",
            "cannot be combined with nic.tso",
        ),
        (
            "zero-copy on an ideal host",
            host("zero_copy = { fragment = true }"),
            "hosts[0].zero_copy",
            "profile is not set",
        ),
        ("TOML syntax error", "[[hosts]\nname = \"a\n".to_string(), "", "line 1"),
    ]
}

#[test]
fn every_malformed_scenario_names_its_field_and_reason() {
    let mut wrong = Vec::new();
    for (what, text, path, reason) in table() {
        let outcome = std::panic::catch_unwind(|| config_error(&text));
        match outcome {
            Ok(e) if e.path == path && e.reason.contains(reason) => {}
            Ok(e) => wrong.push(format!("{what}: got `{}: {}`, want path `{path}` and `{reason}`", e.path, e.reason)),
            Err(_) => wrong.push(format!("{what}: no config error (see the panic above)")),
        }
    }
    assert!(wrong.is_empty(), "{} of {} rows wrong:\n{}", wrong.len(), table().len(), wrong.join("\n"));
}

/// Run `text`, which must stop at its time limit: an explicit simulation
/// error, within `wall_s` seconds of wall-clock time.
fn ends_at_the_time_limit(text: &str, wall_s: f64) {
    let start = Instant::now();
    match run_toml(text, &RunOptions::default()) {
        Err(Error::Simulation(m)) => assert!(m.contains("did not finish within run.time_limit"), "{m}"),
        Err(other) => panic!("expected the time limit to end the run, got: {other}"),
        Ok(r) => panic!("an absurd workload finished: {:?}", r.summary),
    }
    let wall = start.elapsed().as_secs_f64();
    assert!(wall < wall_s, "took {wall:.1} s of wall time");
}

#[test]
fn a_trillion_datagrams_end_at_the_time_limit() {
    ends_at_the_time_limit(
        &scenario(
            "",
            "",
            "[workload.udp_stream]\nfrom = \"a\"\nto = \"b\"\ncount = 1000000000000\n",
            "[run]\ntime_limit = \"20ms\"\n",
        ),
        20.0,
    );
}

#[test]
fn a_trillion_transactions_end_at_the_time_limit() {
    ends_at_the_time_limit(
        &scenario(
            "",
            "",
            "[workload.request_response]\nclient = \"a\"\nserver = \"b\"\ntransactions = 1000000000000\n",
            "[run]\ntime_limit = \"20ms\"\n",
        ),
        20.0,
    );
}

#[test]
fn a_petabyte_transfer_ends_at_the_time_limit() {
    ends_at_the_time_limit(
        &scenario(
            "",
            "",
            "[workload.bulk]\nfrom = \"a\"\nto = \"b\"\nbytes = \"1000000GB\"\n",
            "[run]\ntime_limit = \"20ms\"\n",
        ),
        20.0,
    );
}

#[test]
fn a_gigabyte_netpipe_block_ends_at_the_time_limit() {
    let np = "[workload.netpipe]\nclient = \"a\"\nserver = \"b\"\nlower = \"1GiB\"\nupper = \"1GiB\"\n";
    ends_at_the_time_limit(&scenario("", "", np, "[run]\ntime_limit = \"20ms\"\n"), 20.0);
}

#[test]
fn a_datagram_larger_than_the_socket_buffer_fails_explicitly() {
    let text = scenario(
        "udp = { tx_buffer = \"1KiB\" }",
        "",
        "[workload.udp_stream]\nfrom = \"a\"\nto = \"b\"\nsize = \"60000B\"\ncount = 3\n",
        "[run]\ntime_limit = \"20ms\"\n",
    );
    match run_toml(&text, &RunOptions::default()) {
        Err(Error::Simulation(_)) => {}
        Err(Error::Config(e)) => assert_eq!(e.path, "workload.udp_stream.size", "{e}"),
        other => panic!("a datagram that cannot fit its socket: {:?}", other.map(|r| r.summary)),
    }
}

#[test]
fn the_largest_accepted_delays_and_limits_run_without_overflow() {
    // Propagation and reorder delay at their maximum, the longest time
    // limit: the run must end (here: finish) without time arithmetic overflowing.
    let text = scenario(
        "",
        "propagation = \"10s\"\nimpairments = { reorder = 0.5, reorder_delay = \"10s\" }",
        "[workload.request_response]\nclient = \"a\"\nserver = \"b\"\ntransactions = 2\n",
        "[run]\ntime_limit = \"1000000s\"\n",
    );
    let r = run_toml(&text, &RunOptions::default()).unwrap();
    assert_eq!(r.summary.transactions, Some(2));
    assert!(r.summary.sim_time_s >= 40.0, "two round trips of 20 s at least: {}", r.summary.sim_time_s);
}
