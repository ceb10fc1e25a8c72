//! Second pass over a parsed scenario: ranges and combinations, each error
//! naming the field path.

use std::collections::BTreeMap;

use super::{Scenario, WorkloadConfig};
use crate::engine::time::PS_PER_S;
use crate::engine::units::Duration;
use crate::error::ConfigError;

const MIN_RATE: u64 = 10_000_000;
const MAX_RATE: u64 = 400_000_000_000;
const MIN_MTU: u64 = 576;
/// Largest IP MTU: 9216 bytes, the top of the jumbo range common switches,
/// routers and NICs accept (e.g. Palo Alto PAN-OS Layer 3 interfaces "512
/// to 9216 bytes"; HP ProCurve's largest maximum frame size 9216 bytes).
/// There is no IEEE jumbo standard; 9000 B is only the usual setting.
const MAX_MTU: u64 = 9216;
const MAX_BUFFER: u64 = 1 << 30; // the largest window TCP window scaling can express
const MIN_BUFFER: u64 = 1024;
/// Frames one 64 KiB TSO segment can become at the smallest MSS (536 B).
const MAX_TSO_SEGMENTS: u32 = 123;
/// Longest link delay (propagation, reorder delay): 10 s, beyond any
/// terrestrial or satellite path; keeps time arithmetic far from overflow.
const MAX_LINK_DELAY: u64 = 10 * PS_PER_S;
/// Longest time limit and workload duration: 10^6 s (11.6 days) of simulated
/// time, so an event scheduled that far ahead of any instant of the run still
/// fits the u64 picosecond clock (about 213 days).
const MAX_SPAN: u64 = 1_000_000 * PS_PER_S;
/// Most bins the CPU utilisation time series of all timed cores may have
/// together (8 bytes each: 160 MB).
const MAX_SAMPLE_BINS: u64 = 20_000_000;
/// Most concurrent bulk flows (each holds two socket buffers per host).
const MAX_FLOWS: u32 = 1024;
/// Most switches in a scenario.
const MAX_SWITCHES: usize = 1024;

fn err<T>(path: impl Into<String>, reason: impl Into<String>) -> Result<T, ConfigError> {
    Err(ConfigError::new(path, reason))
}

/// Host `i` is on machine `name`: it must be timed, the name well formed,
/// and its `bus` and `memory` sections those of the machine's first host
/// (one PCIe link, one memory system; `machines` records each machine's).
fn same_machine<'a>(
    i: usize,
    name: &'a str,
    timing: Option<&crate::host::timing::Timing>,
    machines: &mut BTreeMap<&'a str, (usize, serde_json::Value, serde_json::Value)>,
) -> Result<(), ConfigError> {
    let path = format!("hosts[{i}].machine");
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        return err(path, format!("must be letters, digits, '-' or '_', got \"{name}\""));
    }
    let Some(t) = timing else {
        return err(path, format!("needs hosts[{i}].profile: an ideal host has no bus or memory to share"));
    };
    let json = |v: Result<serde_json::Value, serde_json::Error>| v.expect("a resolved section serialises");
    let (bus, memory) = (json(serde_json::to_value(&t.bus)), json(serde_json::to_value(&t.memory)));
    match machines.get(name) {
        None => {
            machines.insert(name, (i, bus, memory));
        }
        Some((first, b, m)) => {
            for (section, mine, theirs) in [("bus", &bus, b), ("memory", &memory, m)] {
                if mine != theirs {
                    return err(
                        format!("hosts[{i}].{section}"),
                        format!(
                            "differs from hosts[{first}]'s, which is on the same machine \"{name}\" \
                             (its hosts share one {section})"
                        ),
                    );
                }
            }
        }
    }
    Ok(())
}

/// Driver-level fragmentation and speculation need a page to take at
/// least two fragments on host `i`'s link `l`, a link queue that holds a
/// whole train, and no `tcp.mss` clamp on the page-sized segments.
fn zero_copy_fits(
    i: usize,
    h: &super::HostConfig,
    t: &crate::host::timing::Timing,
    l: usize,
    link: &super::LinkConfig,
) -> Result<(), ConfigError> {
    let z = &t.zero_copy;
    // One receive offload engine per host (nic/offload): the zero-copy
    // driver is one, and it owns the send path when it fragments or asks
    // for admission.
    let zero_copy = z.fragment
        || z.speculate
        || z.os != crate::host::timing::ZeroCopyOs::Copy
        || z.interference.frames > 0
        || z.admission != crate::host::timing::AdmissionMode::Off;
    if zero_copy && t.nic.lro != crate::host::timing::LroMode::Off {
        return err(
            format!("hosts[{i}].nic.lro"),
            "must be \"off\" on a host with zero-copy TCP/IP (zero_copy.*): a host has one receive offload engine",
        );
    }
    if t.nic.tso && z.admission != crate::host::timing::AdmissionMode::Off {
        return err(
            format!("hosts[{i}].nic.tso"),
            "cannot be set with zero_copy.admission (the zero-copy driver gates the frames it sends)",
        );
    }
    if !(z.fragment || z.speculate) {
        return Ok(());
    }
    // IP + TCP headers with timestamps: the most a page-sized packet adds.
    let packet = z.page.0 + 20 + 20 + if h.tcp.timestamps { 12 } else { 0 };
    if packet <= link.mtu.0 {
        return err(
            format!("hosts[{i}].zero_copy.page"),
            format!(
                "{} plus headers fits links[{l}].mtu = {} in one frame: zero-copy fragmentation and speculation need \
                 a page larger than the MTU",
                z.page, link.mtu
            ),
        );
    }
    let fragments = (packet - 20).div_ceil((link.mtu.0 - 20) & !7);
    if z.fragment && u64::from(link.queue) < fragments {
        return err(
            format!("links[{l}].queue"),
            format!(
                "must hold a whole fragment train ({fragments} frames) for host \"{}\", got {}",
                h.name, link.queue
            ),
        );
    }
    if z.fragment && h.tcp.mss.is_some() {
        return err(
            format!("hosts[{i}].tcp.mss"),
            "cannot be set with zero_copy.fragment (the virtual interface sets the MSS to one page)",
        );
    }
    Ok(())
}

fn probability(path: String, p: f64) -> Result<(), ConfigError> {
    if !(0.0..=1.0).contains(&p) {
        return err(path, format!("must be a probability between 0 and 1, got {p}"));
    }
    Ok(())
}

/// A duration that must be at most `max` picoseconds (shown as `shown`).
fn at_most(path: &str, d: Option<Duration>, max: u64, shown: &str) -> Result<(), ConfigError> {
    match d {
        Some(d) if d.0 > max => err(path, format!("must be at most {shown}, got {d}")),
        _ => Ok(()),
    }
}

/// Check ranges and combinations of a parsed scenario.
pub fn validate(s: &Scenario) -> Result<(), ConfigError> {
    if s.hosts.len() < 2 {
        return err("hosts", format!("need at least two hosts, got {}", s.hosts.len()));
    }
    // Each link's MTU before the hosts: their checks size frames and fragment trains by it.
    for (i, l) in s.links.iter().enumerate() {
        if !(MIN_MTU..=MAX_MTU).contains(&l.mtu.0) {
            return err(format!("links[{i}].mtu"), format!("must be {MIN_MTU}B to {MAX_MTU}B, got {}", l.mtu));
        }
    }
    let mut names: BTreeMap<&str, usize> = BTreeMap::new();
    let mut timed_cores = 0u64;
    // Each machine's first host and its shared sections (bus, memory).
    let mut machines: BTreeMap<&str, (usize, serde_json::Value, serde_json::Value)> = BTreeMap::new();
    let mut addrs = BTreeMap::new();
    for (i, h) in s.hosts.iter().enumerate() {
        let ok = !h.name.is_empty() && h.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !ok {
            return err(format!("hosts[{i}].name"), format!("must be letters, digits, '-' or '_', got \"{}\"", h.name));
        }
        if let Some(first) = names.insert(&h.name, i) {
            return err(
                format!("hosts[{i}].name"),
                format!("duplicate host name \"{}\" (also hosts[{first}])", h.name),
            );
        }
        let (addr, _) = h.address(i).map_err(|r| ConfigError::new(format!("hosts[{i}].ip"), r))?;
        if addr.is_unspecified() || addr.is_broadcast() || addr.is_multicast() || addr.is_loopback() {
            return err(format!("hosts[{i}].ip"), format!("{addr} is not a unicast host address"));
        }
        if let Some(first) = addrs.insert(addr, i) {
            return err(format!("hosts[{i}].ip"), format!("address {addr} is already used by hosts[{first}]"));
        }
        let tcp = &h.tcp;
        for (field, size) in [("rx_buffer", tcp.rx_buffer), ("tx_buffer", tcp.tx_buffer)] {
            if !(MIN_BUFFER..=MAX_BUFFER).contains(&size.0) {
                return err(format!("hosts[{i}].tcp.{field}"), format!("must be 1KiB to 1GiB, got {size}"));
            }
        }
        for (field, size) in [("rx_buffer", h.udp.rx_buffer), ("tx_buffer", h.udp.tx_buffer)] {
            if !(MIN_BUFFER..=MAX_BUFFER).contains(&size.0) {
                return err(format!("hosts[{i}].udp.{field}"), format!("must be 1KiB to 1GiB, got {size}"));
            }
        }
        let timing = h.timing(i)?;
        timed_cores += timing.as_ref().map_or(0, |t| u64::from(t.cpu.cores));
        if let Some(m) = &h.machine {
            same_machine(i, m, timing.as_ref(), &mut machines)?;
        }
        let tso = timing.as_ref().is_some_and(|t| t.nic.tso);
        if let Some(l) = s.links.iter().position(|l| l.endpoints.contains(&h.name)) {
            if tso && s.links[l].queue < MAX_TSO_SEGMENTS {
                return err(
                    format!("links[{l}].queue"),
                    format!(
                        "must hold a whole TSO burst ({MAX_TSO_SEGMENTS} frames) for host \"{}\", got {}",
                        h.name, s.links[l].queue
                    ),
                );
            }
        }
        if let (Some(t), Some(l)) = (&timing, s.links.iter().position(|l| l.endpoints.contains(&h.name))) {
            zero_copy_fits(i, h, t, l, &s.links[l])?;
        }
        if let Some(mss) = tcp.mss {
            if !(536..=MAX_MTU - 40).contains(&mss.0) {
                return err(format!("hosts[{i}].tcp.mss"), format!("must be 536B to {}B, got {mss}", MAX_MTU - 40));
            }
        }
    }

    // Nodes: hosts 0..n, then switches.
    let n = s.hosts.len();
    let mut switch_names: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, sw) in s.switches.iter().enumerate() {
        let ok = !sw.name.is_empty() && sw.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !ok {
            return err(
                format!("switches[{i}].name"),
                format!("must be letters, digits, '-' or '_', got \"{}\"", sw.name),
            );
        }
        if let Some(h) = names.get(sw.name.as_str()) {
            return err(format!("switches[{i}].name"), format!("\"{}\" is already the name of hosts[{h}]", sw.name));
        }
        if let Some(first) = switch_names.insert(&sw.name, i) {
            return err(
                format!("switches[{i}].name"),
                format!("duplicate switch name \"{}\" (also switches[{first}])", sw.name),
            );
        }
        at_most(&format!("switches[{i}].latency"), Some(sw.latency), MAX_LINK_DELAY, "10s")?;
    }
    if s.switches.len() > MAX_SWITCHES {
        return err("switches", format!("at most {MAX_SWITCHES} switches, got {}", s.switches.len()));
    }
    let node = |name: &str| names.get(name).copied().or_else(|| switch_names.get(name).map(|&k| n + k));
    // Union-find over nodes: a link joining two nodes already connected closes a loop.
    let mut parent: Vec<usize> = (0..n + s.switches.len()).collect();
    fn root(parent: &mut [usize], mut v: usize) -> usize {
        while parent[v] != v {
            parent[v] = parent[parent[v]];
            v = parent[v];
        }
        v
    }
    let mut link_of: BTreeMap<&str, usize> = BTreeMap::new();
    let mut on_switch = vec![false; s.switches.len()];
    for (i, l) in s.links.iter().enumerate() {
        let mut ends = [0; 2];
        for (e, name) in l.endpoints.iter().enumerate() {
            let Some(v) = node(name) else {
                return err(format!("links[{i}].endpoints[{e}]"), format!("no host or switch named \"{name}\""));
            };
            ends[e] = v;
            if v >= n {
                on_switch[v - n] = true;
                continue;
            }
            if let Some(other) = link_of.insert(name, i) {
                return err(
                    format!("links[{i}].endpoints[{e}]"),
                    format!(
                        "host \"{name}\" is already on links[{other}]; a host has one NIC (join hosts through a switch)"
                    ),
                );
            }
            if let Some(mss) = s.hosts[v].tcp.mss {
                if mss.0 + 40 > l.mtu.0 {
                    return err(
                        format!("hosts[{v}].tcp.mss"),
                        format!("{mss} + 40 B of headers exceeds links[{i}].mtu = {}", l.mtu),
                    );
                }
            }
        }
        if l.endpoints[0] == l.endpoints[1] {
            return err(format!("links[{i}].endpoints"), "a link must join two different hosts or switches");
        }
        if !(MIN_RATE..=MAX_RATE).contains(&l.rate.0) {
            return err(format!("links[{i}].rate"), format!("must be 10Mbps to 400Gbps, got {}", l.rate));
        }
        if l.mtu.0 > 1500 && l.rate.0 < 1_000_000_000 {
            return err(
                format!("links[{i}].mtu"),
                format!("jumbo frames ({}) need a rate of at least 1Gbps, got {}", l.mtu, l.rate),
            );
        }
        if !(1..=1_000_000).contains(&l.queue) {
            return err(format!("links[{i}].queue"), format!("must be 1 to 1000000 frames, got {}", l.queue));
        }
        let imp = &l.impairments;
        let p = |f: &str| format!("links[{i}].impairments.{f}");
        probability(p("loss"), imp.loss)?;
        probability(p("duplicate"), imp.duplicate)?;
        probability(p("reorder"), imp.reorder)?;
        probability(p("corrupt"), imp.corrupt)?;
        at_most(&format!("links[{i}].propagation"), Some(l.propagation), MAX_LINK_DELAY, "10s")?;
        at_most(&p("reorder_delay"), Some(imp.reorder_delay), MAX_LINK_DELAY, "10s")?;
        if imp.reorder > 0.0 && imp.reorder_delay.0 == 0 {
            return err(p("reorder_delay"), "must be above zero when reorder > 0, or no frame is ever reordered");
        }
        let (ra, rb) = (root(&mut parent, ends[0]), root(&mut parent, ends[1]));
        if ra == rb {
            return err(
                format!("links[{i}].endpoints"),
                "closes a loop; switches run no spanning tree, so links must form a tree",
            );
        }
        parent[ra] = rb;
    }
    for (i, h) in s.hosts.iter().enumerate() {
        if !link_of.contains_key(h.name.as_str()) {
            return err(format!("hosts[{i}]"), format!("host \"{}\" is on no link", h.name));
        }
    }
    if let Some(i) = on_switch.iter().position(|on| !on) {
        return err(format!("switches[{i}]"), format!("switch \"{}\" is on no link", s.switches[i].name));
    }
    let comp: Vec<usize> = (0..parent.len()).map(|v| root(&mut parent, v)).collect();
    // One network (hosts joined by links and switches): one MTU, one subnet.
    let mut first_link: BTreeMap<usize, usize> = BTreeMap::new();
    for (i, l) in s.links.iter().enumerate() {
        let c = comp[node(&l.endpoints[0]).expect("checked")];
        let j = *first_link.entry(c).or_insert(i);
        if s.links[j].mtu != l.mtu {
            return err(
                format!("links[{i}].mtu"),
                format!(
                    "{} differs from links[{j}].mtu ({}) on the same network; switches do not fragment",
                    l.mtu, s.links[j].mtu
                ),
            );
        }
    }
    let mut first_host: BTreeMap<usize, usize> = BTreeMap::new();
    for (b, &c) in comp.iter().enumerate().take(n) {
        let a = *first_host.entry(c).or_insert(b);
        let ((ia, pa), (ib, _)) = (s.hosts[a].address(a).expect("checked"), s.hosts[b].address(b).expect("checked"));
        let mask = u32::MAX << (32 - pa);
        if u32::from(ia) & mask != u32::from(ib) & mask {
            return err(
                format!("hosts[{b}].ip"),
                format!("{ib} is not in the subnet of hosts[{a}] ({ia}/{pa}); there is no router"),
            );
        }
    }

    let connected =
        |a: &str, b: &str| matches!((names.get(a), names.get(b)), (Some(&x), Some(&y)) if comp[x] == comp[y]);
    let endpoint = |field: &str, name: &str| -> Result<(), ConfigError> {
        if names.contains_key(name) {
            Ok(())
        } else {
            err(format!("workload.{field}"), format!("no host named \"{name}\""))
        }
    };
    // Two named, distinct, linked hosts for workload `kind`.
    let pair_ok = |kind: &str, (fa, a): (&str, &String), (fb, b): (&str, &String)| -> Result<(), ConfigError> {
        endpoint(&format!("{kind}.{fa}"), a)?;
        endpoint(&format!("{kind}.{fb}"), b)?;
        if a == b {
            return err(format!("workload.{kind}.{fb}"), "the two ends must be different hosts");
        }
        if !connected(a, b) {
            return err(format!("workload.{kind}.{fb}"), format!("\"{a}\" and \"{b}\" are not connected by links"));
        }
        Ok(())
    };
    // A bulk transfer `kind` (`bulk` or `transfers[i]`).
    let bulk_ok = |kind: &str, b: &super::BulkConfig| -> Result<(), ConfigError> {
        let f = |field: &str| format!("workload.{kind}.{field}");
        pair_ok(kind, ("from", &b.from), ("to", &b.to))?;
        match (b.bytes, b.duration) {
            (Some(_), Some(_)) => return err(format!("workload.{kind}"), "give either bytes or duration, not both"),
            (None, None) => return err(format!("workload.{kind}"), "give bytes or duration"),
            (Some(n), None) if n.0 == 0 => return err(f("bytes"), "must be above zero"),
            (None, Some(d)) if d.0 == 0 => return err(f("duration"), "must be above zero"),
            _ => {}
        }
        at_most(&f("duration"), b.duration, MAX_SPAN, "1000000s")?;
        if b.omit.is_some() && b.duration.is_none() {
            return err(f("omit"), "needs duration: the measured interval follows the warm-up");
        }
        at_most(&f("omit"), b.omit, MAX_SPAN, "1000000s")?;
        if !(1..=MAX_BUFFER).contains(&b.write_size.0) {
            return err(f("write_size"), format!("must be 1B to 1GiB, got {}", b.write_size));
        }
        if b.port == 0 {
            return err(f("port"), "must be 1 to 65535");
        }
        if !(1..=MAX_FLOWS).contains(&b.flows) {
            return err(f("flows"), format!("must be 1 to {MAX_FLOWS}, got {}", b.flows));
        }
        if b.disk_rate.is_some_and(|r| r.0 == 0) {
            return err(f("disk_rate"), "must be above zero");
        }
        let last = u32::from(b.port) + b.flows - 1;
        if last > 65_535 {
            let n = b.flows - 1;
            return err(f("flows"), format!("flow {n} would need port {last} (port + flow index), above 65535"));
        }
        if let (Some(r), Some(first)) = (&b.rpc, b.rpc_port()) {
            if kind != "bulk" {
                return err(f("rpc"), "only [workload.bulk] runs request/response connections beside its flows");
            }
            if b.duration.is_none() {
                return err(f("rpc"), "needs duration: the connections run as long as the flows");
            }
            if !(1..=MAX_FLOWS).contains(&r.connections) {
                return err(f("rpc.connections"), format!("must be 1 to {MAX_FLOWS}, got {}", r.connections));
            }
            for (field, size) in [("request", r.request), ("response", r.response)] {
                if !(1..=MAX_BUFFER).contains(&size.0) {
                    return err(f(&format!("rpc.{field}")), format!("must be 1B to 1GiB, got {size}"));
                }
            }
            let end = first + r.connections - 1;
            if first == 0 || end > 65_535 {
                return err(f("rpc.port"), format!("ports {first} to {end} must be 1 to 65535"));
            }
            if first <= last && u32::from(b.port) <= end {
                return err(f("rpc.port"), format!("ports {first} to {end} overlap the flows' {} to {last}", b.port));
            }
        }
        Ok(())
    };
    match &s.workload {
        WorkloadConfig::Bulk(b) => bulk_ok("bulk", b)?,
        WorkloadConfig::Dsm(d) => {
            endpoint("dsm.home", &d.home)?;
            if d.nodes.is_empty() {
                return err("workload.dsm.nodes", "give at least one node");
            }
            for (i, name) in d.nodes.iter().enumerate() {
                pair_ok("dsm", ("home", &d.home), (&format!("nodes[{i}]"), name))?;
                if let Some(j) = d.nodes[..i].iter().position(|n| n == name) {
                    return err(format!("workload.dsm.nodes[{i}]"), format!("\"{name}\" is already nodes[{j}]"));
                }
            }
            for (field, size) in [("page_size", d.page_size), ("request", d.request)] {
                if !(1..=MAX_BUFFER).contains(&size.0) {
                    return err(format!("workload.dsm.{field}"), format!("must be 1B to 1GiB, got {size}"));
                }
            }
            match (d.pages, d.duration) {
                (Some(_), Some(_)) => return err("workload.dsm", "give either pages or duration, not both"),
                (Some(0), None) => return err("workload.dsm.pages", "must be at least 1"),
                (None, Some(t)) if t.0 == 0 => return err("workload.dsm.duration", "must be above zero"),
                _ => {}
            }
            at_most("workload.dsm.duration", d.duration, MAX_SPAN, "1000000s")?;
            if d.omit.is_some() && d.duration.is_none() {
                return err("workload.dsm.omit", "needs duration: the measured interval follows the warm-up");
            }
            at_most("workload.dsm.omit", d.omit, MAX_SPAN, "1000000s")?;
            at_most("workload.dsm.think", Some(d.think), MAX_LINK_DELAY, "10s")?;
            let last = u32::from(d.port) + d.nodes.len() as u32 - 1;
            if d.port == 0 || last > 65_535 {
                return err("workload.dsm.port", format!("ports {} to {last} must be 1 to 65535", d.port));
            }
        }
        WorkloadConfig::Dolly(d) => {
            if d.nodes.len() < 2 {
                return err("workload.dolly.nodes", format!("need at least two nodes, got {}", d.nodes.len()));
            }
            for (i, name) in d.nodes.iter().enumerate() {
                endpoint(&format!("dolly.nodes[{i}]"), name)?;
                if let Some(j) = d.nodes[..i].iter().position(|n| n == name) {
                    return err(format!("workload.dolly.nodes[{i}]"), format!("\"{name}\" is already nodes[{j}]"));
                }
                if i > 0 && !connected(&d.nodes[i - 1], name) {
                    let prev = &d.nodes[i - 1];
                    return err(
                        format!("workload.dolly.nodes[{i}]"),
                        format!("\"{prev}\" and \"{name}\" are not connected by links"),
                    );
                }
            }
            if d.bytes.0 == 0 {
                return err("workload.dolly.bytes", "must be above zero");
            }
            if !(1..=MAX_BUFFER).contains(&d.write_size.0) {
                return err("workload.dolly.write_size", format!("must be 1B to 1GiB, got {}", d.write_size));
            }
            if d.disk_rate.is_some_and(|r| r.0 == 0) {
                return err("workload.dolly.disk_rate", "must be above zero");
            }
            if d.port == 0 {
                return err("workload.dolly.port", "must be 1 to 65535");
            }
        }
        WorkloadConfig::Transfers(list) => {
            if list.is_empty() {
                return err("workload.transfers", "give at least one transfer");
            }
            // (receiving host, first port, last port, entry) of the entries so far.
            let mut ranges: Vec<(&str, u32, u32, usize)> = Vec::new();
            let mut total = 0;
            for (i, b) in list.iter().enumerate() {
                bulk_ok(&format!("transfers[{i}]"), b)?;
                total += b.flows;
                let (lo, hi) = (u32::from(b.port), u32::from(b.port) + b.flows - 1);
                if let Some(&(_, a, z, j)) = ranges.iter().find(|(h, a, z, _)| *h == b.to && lo <= *z && *a <= hi) {
                    return err(
                        format!("workload.transfers[{i}].port"),
                        format!(
                            "ports {lo} to {hi} on host \"{}\" overlap those of workload.transfers[{j}] ({a} to {z})",
                            b.to
                        ),
                    );
                }
                ranges.push((&b.to, lo, hi, i));
            }
            if total > MAX_FLOWS {
                return err("workload.transfers", format!("at most {MAX_FLOWS} flows in all, got {total}"));
            }
        }
        WorkloadConfig::RequestResponse(r) | WorkloadConfig::TcpCrr(r) => {
            let kind = if matches!(s.workload, WorkloadConfig::TcpCrr(_)) { "tcp_crr" } else { "request_response" };
            pair_ok(kind, ("client", &r.client), ("server", &r.server))?;
            for (field, size) in [("request", r.request), ("response", r.response)] {
                if !(1..=MAX_BUFFER).contains(&size.0) {
                    return err(format!("workload.{kind}.{field}"), format!("must be 1B to 1GiB, got {size}"));
                }
            }
            if r.transactions == 0 {
                return err(format!("workload.{kind}.transactions"), "must be at least 1");
            }
            if r.port == 0 {
                return err(format!("workload.{kind}.port"), "must be 1 to 65535");
            }
        }
        WorkloadConfig::UdpStream(u) => {
            pair_ok("udp_stream", ("from", &u.from), ("to", &u.to))?;
            if !(8..=65_507).contains(&u.size.0) {
                return err("workload.udp_stream.size", format!("must be 8B to 65507B, got {}", u.size));
            }
            match (u.count, u.duration) {
                (Some(_), Some(_)) => return err("workload.udp_stream", "give either count or duration, not both"),
                (None, None) => return err("workload.udp_stream", "give count or duration"),
                (Some(0), None) => return err("workload.udp_stream.count", "must be above zero"),
                (None, Some(d)) if d.0 == 0 => return err("workload.udp_stream.duration", "must be above zero"),
                _ => {}
            }
            for (field, d) in [("duration", u.duration), ("linger", Some(u.linger)), ("on", u.on), ("off", u.off)] {
                at_most(&format!("workload.udp_stream.{field}"), d, MAX_SPAN, "1000000s")?;
            }
            if u.rate.is_some_and(|r| r.0 == 0) {
                return err("workload.udp_stream.rate", "must be above zero");
            }
            if u.arrivals == crate::config::Arrivals::Poisson && u.rate.is_none() {
                return err(
                    "workload.udp_stream.arrivals",
                    "poisson arrivals need a mean rate (workload.udp_stream.rate)",
                );
            }
            match (u.on, u.off) {
                (Some(on), Some(_)) if on.0 == 0 => return err("workload.udp_stream.on", "must be above zero"),
                (Some(_), None) => return err("workload.udp_stream.off", "on/off bursts need both on and off"),
                (None, Some(_)) => return err("workload.udp_stream.on", "on/off bursts need both on and off"),
                _ => {}
            }
            if u.port == 0 {
                return err("workload.udp_stream.port", "must be 1 to 65535");
            }
        }
        WorkloadConfig::PcapReplay(p) => {
            pair_ok("pcap_replay", ("from", &p.from), ("to", &p.to))?;
            if p.file.is_empty() {
                return err("workload.pcap_replay.file", "must name a pcap file");
            }
            if p.limit == Some(0) {
                return err("workload.pcap_replay.limit", "must be above zero");
            }
            at_most("workload.pcap_replay.linger", Some(p.linger), MAX_SPAN, "1000000s")?;
            if p.port == 0 {
                return err("workload.pcap_replay.port", "must be 1 to 65535");
            }
        }
        WorkloadConfig::UdpRr(u) => {
            pair_ok("udp_rr", ("client", &u.client), ("server", &u.server))?;
            for (field, size) in [("request", u.request), ("response", u.response)] {
                if !(1..=65_507).contains(&size.0) {
                    return err(format!("workload.udp_rr.{field}"), format!("must be 1B to 65507B, got {size}"));
                }
            }
            if u.transactions == 0 {
                return err("workload.udp_rr.transactions", "must be at least 1");
            }
            if u.port == 0 {
                return err("workload.udp_rr.port", "must be 1 to 65535");
            }
        }
        WorkloadConfig::Echo(e) => {
            pair_ok("echo", ("client", &e.client), ("server", &e.server))?;
            let max = match e.protocol {
                super::MessageProtocol::Udp => 65_507,
                super::MessageProtocol::Via => super::VIA_MAX_MESSAGE,
            };
            if !(1..=max).contains(&e.size.0) {
                return err("workload.echo.size", format!("must be 1B to {max}B for {:?}, got {}", e.protocol, e.size));
            }
            if !(1..=1_000_000).contains(&e.messages) {
                return err("workload.echo.messages", format!("must be 1 to 1000000, got {}", e.messages));
            }
            if e.warmup > 1_000_000 {
                return err("workload.echo.warmup", format!("must be at most 1000000, got {}", e.warmup));
            }
            if e.delay.0 == 0 {
                return err("workload.echo.delay", "must be above zero");
            }
            at_most("workload.echo.delay", Some(e.delay), PS_PER_S, "1s")?;
            if e.port == 0 {
                return err("workload.echo.port", "must be 1 to 65535");
            }
            let server = s.hosts.iter().position(|h| h.name == e.server).expect("checked above");
            if s.hosts[server].profile.is_some() {
                return err(
                    format!("hosts[{server}].profile"),
                    format!("\"{}\" is the echo node of workload.echo, which is ideal: remove its profile", e.server),
                );
            }
            let l = s.links.iter().position(|l| l.endpoints.contains(&e.client)).expect("checked above");
            let imp = &s.links[l].impairments;
            if imp.loss > 0.0 || imp.duplicate > 0.0 || imp.reorder > 0.0 || imp.corrupt > 0.0 {
                return err(
                    "workload.echo",
                    format!(
                        "neither UDP nor this VIA retransmits: the echo workload needs links[{l}] without impairments"
                    ),
                );
            }
        }
        WorkloadConfig::Netpipe(n) => {
            pair_ok("netpipe", ("client", &n.client), ("server", &n.server))?;
            if !(1..=MAX_BUFFER).contains(&n.lower.0) {
                return err("workload.netpipe.lower", format!("must be 1B to 1GiB, got {}", n.lower));
            }
            if let Some(upper) = n.upper {
                if upper < n.lower || upper.0 > MAX_BUFFER {
                    return err(
                        "workload.netpipe.upper",
                        format!("must be from lower ({}) to 1GiB, got {upper}", n.lower),
                    );
                }
            }
            if let Some(b) = n.buffer {
                if !(MIN_BUFFER..=MAX_BUFFER).contains(&b.0) {
                    return err("workload.netpipe.buffer", format!("must be 1KiB to 1GiB, got {b}"));
                }
            }
            if n.transport == crate::config::Transport::Udp {
                let l = s.links.iter().position(|l| l.endpoints.contains(&n.client)).expect("checked above");
                let imp = &s.links[l].impairments;
                if imp.loss > 0.0 || imp.duplicate > 0.0 || imp.reorder > 0.0 || imp.corrupt > 0.0 {
                    return err(
                        "workload.netpipe.transport",
                        format!(
                            "UDP does not retransmit or reorder: NetPIPE over UDP needs links[{l}] without impairments"
                        ),
                    );
                }
            }
            if n.bidirectional && n.stream {
                return err(
                    "workload.netpipe.bidirectional",
                    "cannot be combined with stream mode (NetPIPE's -2 and -s)",
                );
            }
            if n.run_time.is_some_and(|t| t.0 == 0) {
                return err("workload.netpipe.run_time", "must be above zero");
            }
            at_most("workload.netpipe.run_time", n.run_time, MAX_SPAN, "1000000s")?;
            at_most("workload.netpipe.stop_time", Some(n.stop_time), MAX_SPAN, "1000000s")?;
            if n.stop_time.0 == 0 {
                return err("workload.netpipe.stop_time", "must be above zero");
            }
            if n.port == 0 {
                return err("workload.netpipe.port", "must be 1 to 65535");
            }
        }
    }
    if s.run.time_limit.0 == 0 {
        return err("run.time_limit", "must be above zero");
    }
    at_most("run.time_limit", Some(s.run.time_limit), MAX_SPAN, "1000000s")?;
    if s.run.sample_interval.0 < 1_000_000 {
        return err("run.sample_interval", format!("must be at least 1us, got {}", s.run.sample_interval));
    }
    let bins = s.run.time_limit.0.div_ceil(s.run.sample_interval.0);
    if bins.saturating_mul(timed_cores) > MAX_SAMPLE_BINS {
        return err(
            "run.sample_interval",
            format!(
                "{} over run.time_limit = {} is up to {bins} bins for each of {timed_cores} timed CPU cores, \
                 more than {MAX_SAMPLE_BINS} in all; raise the interval or lower the time limit",
                s.run.sample_interval, s.run.time_limit
            ),
        );
    }
    Ok(())
}
