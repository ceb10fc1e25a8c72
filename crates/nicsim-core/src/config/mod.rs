//! Scenario files: the contract between users (TOML, Python) and the core.
//!
//! A scenario names hosts, the links between them and one workload. Every
//! knob has a unit-bearing type, a default and a one-line doc. Parsing
//! tracks the field path (`links[0].rate`) so every error names it; a second
//! pass checks ranges and combinations. Nothing in a scenario is executed.
//!
//! ```toml
//! name = "gbe-mtu1500-bulk"
//! [[hosts]]
//! name = "a"
//! [[hosts]]
//! name = "b"
//! [[links]]
//! endpoints = ["a", "b"]
//! rate = "1Gbps"
//! [workload.bulk]
//! from = "a"
//! to = "b"
//! bytes = "64MiB"
//! ```

mod validate;

use std::net::Ipv4Addr;

use serde::{Deserialize, Serialize};

use crate::engine::units::{Bandwidth, Duration, Size};
use crate::error::ConfigError;
pub use crate::host::stack_config::{CoalescedAck, CongestionControl, DelayedAck, TcpConfig, UdpConfig};
use crate::host::timing::{self, Timing};
pub use crate::link::Impairments;

/// Largest message of the echo workload over VIA (one registered buffer).
pub const VIA_MAX_MESSAGE: u64 = 65_536;

pub use validate::validate;

/// A whole scenario.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Short name, used for result folders.
    #[serde(default = "default_name")]
    pub name: String,
    /// One line on what the scenario shows.
    #[serde(default)]
    pub description: String,
    /// Seed of every random stream in the run (the CLI's `--seed` overrides it).
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// The hosts; each runs its own smoltcp stack.
    pub hosts: Vec<HostConfig>,
    /// Ethernet switches hosts can share (store-and-forward, one MAC table).
    #[serde(default)]
    pub switches: Vec<SwitchConfig>,
    /// Full-duplex Ethernet links between hosts and switches.
    pub links: Vec<LinkConfig>,
    /// What the hosts do.
    pub workload: WorkloadConfig,
    /// Limits of the run.
    #[serde(default)]
    pub run: RunConfig,
}

fn default_name() -> String {
    "scenario".into()
}
fn default_seed() -> u64 {
    1
}

/// One host: an ideal machine (no CPU cost yet) running smoltcp.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HostConfig {
    /// Unique name (letters, digits, `-`, `_`).
    pub name: String,
    /// IPv4 address with optional prefix (`10.0.0.1/24`); default 10.0.0.(index+1)/24.
    #[serde(default)]
    pub ip: Option<String>,
    /// TCP knobs for every TCP socket on this host.
    #[serde(default)]
    pub tcp: TcpConfig,
    /// UDP socket buffers.
    #[serde(default)]
    pub udp: UdpConfig,
    /// Timing profile (`kurmann-pii-400`, `ortiz-p4-400`, `won-simos-mips`,
    /// `modern-x86-pcie`); none: an ideal host that costs no time.
    #[serde(default)]
    pub profile: Option<String>,
    /// Overrides of the profile's `cpu` section.
    #[serde(default)]
    pub cpu: Option<toml::Table>,
    /// Overrides of the profile's `memory` section.
    #[serde(default)]
    pub memory: Option<toml::Table>,
    /// Overrides of the profile's `bus` section.
    #[serde(default)]
    pub bus: Option<toml::Table>,
    /// Overrides of the profile's `nic` section.
    #[serde(default)]
    pub nic: Option<toml::Table>,
    /// Overrides of the profile's `costs` section.
    #[serde(default)]
    pub costs: Option<toml::Table>,
    /// Overrides of the profile's `offload` section (protocol offload to a
    /// communication processor: `enabled`, `memory_multiplier`, `clock_ratio`, ...).
    #[serde(default)]
    pub offload: Option<toml::Table>,
    /// The application's computation beside its communication
    /// (`compute_per_kib`, `compute_per_call`; needs a profile).
    #[serde(default)]
    pub app: Option<toml::Table>,
    /// Overrides of the profile's `zero_copy` section (Kurmann zero-copy
    /// TCP/IP: `fragment`, `speculate`, `os`, `cam`, `interference`, ...).
    #[serde(default)]
    pub zero_copy: Option<toml::Table>,
    /// The server this host is part of (none: a machine of its own). Timed
    /// hosts that name the same machine share its I/O bus (one PCIe link)
    /// and its L3's DDIO ways; each keeps its own cores, NIC queues and
    /// stack, as a core (or a VM with its own virtual function) of one
    /// server does. Their `bus` and `memory` sections must be the same.
    #[serde(default)]
    pub machine: Option<String>,
}

/// A store-and-forward Ethernet switch: a frame is forwarded once it has
/// arrived whole, after `latency`, to the port its destination MAC address
/// is behind (broadcasts to every other port), and waits there in the
/// outgoing link's queue (`queue` frames; when full, the frame is dropped).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchConfig {
    /// Unique name among hosts and switches (letters, digits, `-`, `_`).
    pub name: String,
    /// Forwarding latency after a frame has arrived whole; default none
    /// (only the store-and-forward reception itself).
    #[serde(default)]
    pub latency: Duration,
}

/// A full-duplex Ethernet link between two hosts, a host and a switch, or
/// two switches.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LinkConfig {
    /// The two host or switch names it joins.
    pub endpoints: [String; 2],
    /// Line rate, 10 Mb/s to 400 Gb/s.
    #[serde(default = "default_rate")]
    pub rate: Bandwidth,
    /// One-way propagation delay (5 ns per metre of cable).
    #[serde(default)]
    pub propagation: Duration,
    /// IP MTU, 576 to 9216 bytes (the largest jumbo MTU common switches and
    /// NICs accept); more than 1500 (jumbo frames) needs at least 1 Gb/s.
    #[serde(default = "default_mtu")]
    pub mtu: Size,
    /// Transmit queue per direction, in frames (including the one on the wire).
    #[serde(default = "default_queue")]
    pub queue: u32,
    /// When the queue is full, tell the sending host's stack to wait (like
    /// Linux stopping the device queue) instead of dropping the frame.
    #[serde(default = "yes")]
    pub backpressure: bool,
    /// Seeded impairments applied to every frame, in both directions.
    #[serde(default)]
    pub impairments: Impairments,
}

fn default_rate() -> Bandwidth {
    Bandwidth(1_000_000_000)
}
fn default_mtu() -> Size {
    Size(1500)
}
fn default_queue() -> u32 {
    1000
}

/// What the hosts do: exactly one workload per scenario.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum WorkloadConfig {
    /// One TCP connection moving a byte count, or for a duration.
    Bulk(BulkConfig),
    /// TCP transactions: a request, then a response, one at a time.
    RequestResponse(RrConfig),
    /// NetPIPE 3.7 over TCP: ping-pong (or stream) over its block-size schedule.
    Netpipe(NetpipeConfig),
    /// UDP datagrams one way, as fast as possible or at a constant rate (netperf UDP_STREAM).
    UdpStream(UdpStreamConfig),
    /// UDP request/response, one at a time (netperf UDP_RR).
    UdpRr(RrConfig),
    /// TCP connect, request, response, close, repeated: a new connection per
    /// transaction (netperf TCP_CRR).
    TcpCrr(RrConfig),
    /// A pcap file's frame sizes and timing replayed as UDP datagrams.
    PcapReplay(PcapReplayConfig),
    /// Several bulk transfers at once (`[[workload.transfers]]`, each like
    /// `[workload.bulk]`), e.g. both directions of a link.
    Transfers(Vec<BulkConfig>),
    /// Dolly: an image streamed down a chain of TCP connections, each node
    /// storing it on its disk and forwarding it.
    Dolly(DollyConfig),
    /// Page faults of a distributed shared memory: nodes request pages from
    /// their home node, one at a time each.
    Dsm(DsmConfig),
    /// Messages to an echo node, one at a time, over UDP sockets or VIA
    /// (user-level messaging); per-message send and receive cycles by layer
    /// (the Won study).
    Echo(EchoConfig),
}

impl WorkloadConfig {
    /// The warm-up left out of the measurement: the longest `omit` of the
    /// bulk transfers, or the DSM's (none for other workloads).
    pub fn omit(&self) -> Option<Duration> {
        match self {
            WorkloadConfig::Bulk(b) => b.omit,
            WorkloadConfig::Transfers(list) => list.iter().filter_map(|b| b.omit).max_by_key(|d| d.0),
            WorkloadConfig::Dsm(d) => d.omit,
            _ => None,
        }
    }
}

/// A page-based distributed shared memory's traffic.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DsmConfig {
    /// The node holding the pages.
    pub home: String,
    /// The nodes faulting on them; each has one TCP connection to `home`.
    pub nodes: Vec<String>,
    /// Page transfers per node (1000 unless `duration` is given).
    #[serde(default)]
    pub pages: Option<u64>,
    /// Instead of `pages`: each node faults until `omit` + `duration` has
    /// passed, then finishes the fault it is in and stops.
    #[serde(default)]
    pub duration: Option<Duration>,
    /// Warm-up left out of the measurement (needs `duration`): the
    /// transactions completed and the hosts' CPU counters count only from
    /// simulated time `omit` on.
    #[serde(default)]
    pub omit: Option<Duration>,
    /// Page size.
    #[serde(default = "default_page")]
    pub page_size: Size,
    /// Size of a page request.
    #[serde(default = "default_page_request")]
    pub request: Size,
    /// The application's work between receiving a page and its next fault.
    #[serde(default)]
    pub think: Duration,
    /// Home's port for the first node (node `i` uses `port + i`).
    #[serde(default = "default_port")]
    pub port: u16,
}

/// The transport of an echo workload.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MessageProtocol {
    /// Kernel UDP/IP sockets (`sendto`, `recvfrom`).
    #[default]
    Udp,
    /// VIA-style user-level messaging (`VipPostSend`, `VipPostRecv`) in its
    /// own Ethernet frames (EtherType 0x88B5).
    Via,
}

/// Messages to an echo node that swaps the headers of every frame and
/// returns it: the measured host never uses loopback.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EchoConfig {
    /// The measured host.
    pub client: String,
    /// The echo node (an ideal host: it swaps headers at no cost).
    pub server: String,
    /// `udp` or `via`.
    #[serde(default)]
    pub protocol: MessageProtocol,
    /// Message size (1B to 65507B for UDP, 1B to 64KiB for VIA).
    #[serde(default = "default_message")]
    pub size: Size,
    /// Messages measured.
    #[serde(default = "default_messages")]
    pub messages: u64,
    /// Messages sent first and left out of the measurement (ARP, cold start).
    #[serde(default = "default_warmup")]
    pub warmup: u64,
    /// The echo node's turnaround per frame; long enough that a send has
    /// completed before its echo arrives, so sends and receives are measured apart.
    #[serde(default = "default_echo_delay")]
    pub delay: Duration,
    /// UDP port of the echo node (UDP only).
    #[serde(default = "default_port")]
    pub port: u16,
}

fn default_page() -> Size {
    Size(4096)
}
fn default_page_request() -> Size {
    Size(64)
}

/// Dolly's multi-drop chain.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DollyConfig {
    /// The chain, from the node holding the image to the last.
    pub nodes: Vec<String>,
    /// Size of the image.
    pub bytes: Size,
    /// Bytes per read and write call.
    #[serde(default = "default_write_size")]
    pub write_size: Size,
    /// Disk bandwidth of every receiving node; none: no disk.
    #[serde(default)]
    pub disk_rate: Option<Bandwidth>,
    /// TCP port every node listens on.
    #[serde(default = "default_port")]
    pub port: u16,
}

fn default_message() -> Size {
    Size(256)
}
fn default_messages() -> u64 {
    20
}
fn default_warmup() -> u64 {
    2
}
fn default_echo_delay() -> Duration {
    Duration(1_000_000_000)
}

/// Replay of a pcap file as UDP traffic.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PcapReplayConfig {
    /// Sending host.
    pub from: String,
    /// Receiving host.
    pub to: String,
    /// Classic pcap file (µs or ns timestamps, Ethernet or raw IP), relative to the scenario file.
    pub file: String,
    /// Replay at most this many records (default: all).
    #[serde(default)]
    pub limit: Option<u64>,
    /// How long the receiver waits for stragglers after the last datagram was sent.
    #[serde(default = "default_linger")]
    pub linger: Duration,
    /// Receiver's UDP port.
    #[serde(default = "default_port")]
    pub port: u16,
    /// Send times and sizes read from `file` before the run.
    #[serde(skip)]
    pub schedule: Option<std::sync::Arc<crate::probe::schedule::Schedule>>,
}

/// A UDP stream.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct UdpStreamConfig {
    /// Sending host.
    pub from: String,
    /// Receiving host.
    pub to: String,
    /// Payload bytes per datagram (8B to 65507B; above the MTU, IP fragments it).
    #[serde(default = "default_datagram")]
    pub size: Size,
    /// Datagrams to send (give this or `duration`).
    #[serde(default)]
    pub count: Option<u64>,
    /// Or send for this long.
    #[serde(default)]
    pub duration: Option<Duration>,
    /// Mean payload bit rate; none: as fast as the sender's socket takes them.
    #[serde(default)]
    pub rate: Option<Bandwidth>,
    /// Spacing of datagrams at `rate`: `constant` (CBR) or `poisson`
    /// (exponential gaps, seeded).
    #[serde(default)]
    pub arrivals: Arrivals,
    /// On/off bursts: send for `on`, pause for `off`, repeat (give both or neither).
    #[serde(default)]
    pub on: Option<Duration>,
    /// Pause between bursts.
    #[serde(default)]
    pub off: Option<Duration>,
    /// How long the receiver waits for stragglers after the last datagram was sent.
    #[serde(default = "default_linger")]
    pub linger: Duration,
    /// Receiver's UDP port.
    #[serde(default = "default_port")]
    pub port: u16,
}

/// How datagrams are spaced in time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Arrivals {
    /// Equal gaps of size × 8 / rate.
    #[default]
    Constant,
    /// Exponentially distributed gaps with that mean.
    Poisson,
}

fn default_datagram() -> Size {
    Size(1472)
}
fn default_linger() -> Duration {
    Duration(1_000_000_000)
}

/// NetPIPE (`NPtcp`) options.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NetpipeConfig {
    /// Transmitting host (`NPtcp -h`).
    pub client: String,
    /// Receiving host.
    pub server: String,
    /// First block size (`-l`).
    #[serde(default = "one_byte")]
    pub lower: Size,
    /// Last block size (`-u`); NetPIPE's default has none (it stops at the stop time).
    #[serde(default)]
    pub upper: Option<Size>,
    /// Perturbation in bytes (`-p`); 0 turns it off.
    #[serde(default = "default_perturbation")]
    pub perturbation: u64,
    /// Stream mode (`-s`): blocks one way, time per block not halved.
    #[serde(default)]
    pub stream: bool,
    /// Bidirectional mode (`-2`): both ends send a block at once, then
    /// receive the other's; blocks are capped at the send buffer size.
    #[serde(default)]
    pub bidirectional: bool,
    /// Cache invalidation (`-I`): data always comes from main memory (timed hosts).
    #[serde(default)]
    pub invalidate_cache: bool,
    /// Socket buffer size for both ends (`-b`).
    #[serde(default)]
    pub buffer: Option<Size>,
    /// NetPIPE built with `-DFINAL`: RUNTM 0.25 s and 7 trials instead of 0.10 s and 3.
    #[serde(default)]
    pub r#final: bool,
    /// Target time per trial (RUNTM) if not NetPIPE's; shorter runs faster, less precisely.
    #[serde(default)]
    pub run_time: Option<Duration>,
    /// Stop once a block takes longer than this (STOPTM).
    #[serde(default = "default_stop_time")]
    pub stop_time: Duration,
    /// Server's port.
    #[serde(default = "default_port")]
    pub port: u16,
    /// Transport: `tcp` (NPtcp) or `udp` (each block as datagrams of at most
    /// the IP MTU less 28 bytes; needs a link without impairments).
    #[serde(default)]
    pub transport: Transport,
}

/// The transport NetPIPE runs over.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// TCP, as `NPtcp`.
    #[default]
    Tcp,
    /// UDP datagrams.
    Udp,
}

fn default_perturbation() -> u64 {
    3
}
fn default_stop_time() -> Duration {
    Duration(1_000_000_000_000)
}

/// A bulk TCP transfer.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BulkConfig {
    /// Sending host.
    pub from: String,
    /// Receiving host.
    pub to: String,
    /// Bytes to send (give this or `duration`).
    #[serde(default)]
    pub bytes: Option<Size>,
    /// Send for this long, then close (give this or `bytes`).
    #[serde(default)]
    pub duration: Option<Duration>,
    /// Warm-up left out of the measurement, as iperf3's `--omit`: the flow
    /// sends for `omit` + `duration`, and the goodput and the hosts' CPU
    /// counters count only from simulated time `omit` on (with `duration`
    /// only). None: the whole run is measured.
    #[serde(default)]
    pub omit: Option<Duration>,
    /// Bytes handed to the socket per write call.
    #[serde(default = "default_write_size")]
    pub write_size: Size,
    /// Receiver's TCP port (flow `i` uses `port + i`).
    #[serde(default = "default_port")]
    pub port: u16,
    /// Concurrent TCP connections from `from` to `to` (1 to 1024); each
    /// sends `bytes` (or for `duration`) and is checked on its own.
    #[serde(default = "one_flow")]
    pub flows: u32,
    /// The receiver writes every chunk it reads to a disk of this bandwidth
    /// before reading on (Dolly's disk); none: no disk.
    #[serde(default)]
    pub disk_rate: Option<Bandwidth>,
    /// Request/response connections beside the flows, from `from` to `to`,
    /// run by the same programs (the Cai study's mixed experiment: netperf
    /// `TCP_RR` beside iperf on one core); only in `[workload.bulk]`, with
    /// `duration`.
    #[serde(default)]
    pub rpc: Option<BulkRpcConfig>,
}

/// Request/response connections beside a bulk flow (`workload.bulk.rpc`).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BulkRpcConfig {
    /// Connections (1 to 1024), each one transaction at a time.
    pub connections: u32,
    /// Request size.
    #[serde(default = "one_byte")]
    pub request: Size,
    /// Response size.
    #[serde(default = "one_byte")]
    pub response: Size,
    /// Receiver's port of the first connection (connection `j` uses
    /// `port + j`); default: the first after the flows' ports.
    #[serde(default)]
    pub port: Option<u16>,
}

impl BulkConfig {
    /// The receiver's port of the first request/response connection.
    pub fn rpc_port(&self) -> Option<u32> {
        self.rpc.as_ref().map(|r| r.port.map_or(u32::from(self.port) + self.flows, u32::from))
    }
}

fn one_flow() -> u32 {
    1
}

fn default_write_size() -> Size {
    Size(64 * 1024)
}
fn default_port() -> u16 {
    5001
}

/// A request/response exchange (over one TCP connection, or UDP datagrams).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RrConfig {
    /// Host sending requests.
    pub client: String,
    /// Host answering them.
    pub server: String,
    /// Request size.
    #[serde(default = "one_byte")]
    pub request: Size,
    /// Response size.
    #[serde(default = "one_byte")]
    pub response: Size,
    /// Number of transactions.
    #[serde(default = "default_transactions")]
    pub transactions: u64,
    /// Server's port.
    #[serde(default = "default_port")]
    pub port: u16,
}

fn one_byte() -> Size {
    Size(1)
}
fn default_transactions() -> u64 {
    1000
}

/// Limits of a run.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// Simulated-time limit; a workload not finished by then fails the run.
    #[serde(default = "default_time_limit")]
    pub time_limit: Duration,
    /// Width of the bins of time series (CPU utilisation over time).
    #[serde(default = "default_sample_interval")]
    pub sample_interval: Duration,
    /// How hosts learn each other's MAC addresses.
    #[serde(default)]
    pub arp: Arp,
}

/// How hosts learn each other's MAC addresses (`run.arp`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Arp {
    /// Over the wire when first needed, as smoltcp does it: one ARP request,
    /// then a second of silence for the whole host before the next, so a
    /// host that starts talking to several new peers at once reaches the
    /// second a second later (Linux resolves each neighbour on its own).
    #[default]
    Cold,
    /// Every host knows every other host's MAC address when the run starts,
    /// as on a testbed whose hosts have talked before: no ARP on the wire
    /// (smoltcp keeps an entry for a minute, then asks again).
    Warm,
}

fn default_sample_interval() -> Duration {
    Duration(1_000_000_000)
}

fn default_time_limit() -> Duration {
    Duration(60 * 1_000_000_000_000)
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig { time_limit: default_time_limit(), sample_interval: default_sample_interval(), arp: Arp::Cold }
    }
}

impl HostConfig {
    /// The host's resolved timing (profile plus overrides), or `None` for an
    /// ideal host. `index` is the host's position, for error paths.
    pub fn timing(&self, index: usize) -> Result<Option<Timing>, ConfigError> {
        let path = format!("hosts[{index}]");
        let sections = [
            ("cpu", &self.cpu),
            ("memory", &self.memory),
            ("bus", &self.bus),
            ("nic", &self.nic),
            ("costs", &self.costs),
            ("offload", &self.offload),
            ("app", &self.app),
            ("zero_copy", &self.zero_copy),
        ];
        let overrides: Vec<(&str, &toml::Table)> =
            sections.iter().filter_map(|(n, t)| t.as_ref().map(|t| (*n, t))).collect();
        match &self.profile {
            Some(name) => timing::resolve(&path, name, &overrides).map(Some),
            None => match overrides.first() {
                Some((section, _)) => Err(ConfigError::new(
                    format!("{path}.{section}"),
                    format!("overrides a timing profile, but {path}.profile is not set"),
                )),
                None => Ok(None),
            },
        }
    }

    /// The host's address and prefix length (after validation this cannot fail).
    pub fn address(&self, index: usize) -> Result<(Ipv4Addr, u8), String> {
        address(self.ip.as_deref(), index)
    }

    /// What the host's stack is built from (`index`: its place in the scenario).
    pub fn stack(&self, index: usize) -> Result<crate::host::stack_config::StackConfig, String> {
        let (ip, prefix) = self.address(index)?;
        Ok(crate::host::stack_config::StackConfig {
            name: self.name.clone(),
            ip,
            prefix,
            tcp: self.tcp.clone(),
            udp: self.udp.clone(),
        })
    }
}

/// Host `index`'s IPv4 address and prefix length: `ip` (`a.b.c.d[/len]`) or 10.0.0.`index + 1`/24.
fn address(ip: Option<&str>, index: usize) -> Result<(Ipv4Addr, u8), String> {
    {
        match ip {
            None => Ok((Ipv4Addr::new(10, 0, 0, (index + 1) as u8), 24)),
            Some(text) => {
                let (addr, prefix) = match text.split_once('/') {
                    Some((a, p)) => (a, p.parse::<u8>().map_err(|_| format!("bad prefix length in \"{text}\""))?),
                    None => (text, 24),
                };
                let addr: Ipv4Addr = addr.parse().map_err(|_| format!("\"{text}\" is not an IPv4 address"))?;
                if !(8..=30).contains(&prefix) {
                    return Err(format!("prefix length must be 8 to 30, got {prefix}"));
                }
                Ok((addr, prefix))
            }
        }
    }
}

/// Parse TOML text into a scenario, reporting the field path of any error.
pub fn parse(text: &str) -> Result<Scenario, ConfigError> {
    let de = toml::Deserializer::new(text);
    let scenario: Scenario = serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let reason = inner.message().to_string();
        let path = if path == "." { String::new() } else { path };
        match inner.span() {
            Some(span) if path.is_empty() => {
                let line = text[..span.start.min(text.len())].lines().count().max(1);
                ConfigError::new("", format!("line {line}: {reason}"))
            }
            _ => ConfigError::new(path, reason),
        }
    })?;
    validate(&scenario)?;
    Ok(scenario)
}

fn yes() -> bool {
    true
}
