//! Timing profiles: what a host's CPU, memory, I/O bus, NIC and protocol
//! stack cost. A host without a profile is ideal (costs nothing).
//!
//! A profile is a TOML file with five sections (`cpu`, `memory`, `bus`,
//! `nic`, `costs`); every number in it carries its source in a comment.
//! Built-in profiles live in `crates/nicsim-core/profiles/` and are compiled
//! in. A scenario picks one with `hosts[i].profile = "name"` and overrides
//! any field inline (`hosts[i].cpu = { clock = "800MHz" }`): the override
//! tables are merged into the profile's, field by field, before the result
//! is validated, so errors name the scenario's field path.
//!
//! Stack costs follow the Linux send and receive paths. Each [`Cost`] is
//! `cycles + mem × memory.latency`: instructions at about one per cycle plus
//! main-memory accesses priced by the memory model, so a slower memory (the
//! Ortiz study's "Offload x") or a faster clock changes them physically.
//! Copies and software checksums cost `bytes / bandwidth × clock`.

use serde::{Deserialize, Serialize};

use crate::bus::BusConfig;
use crate::engine::units::{Bandwidth, Duration, Frequency, Size};
use crate::error::ConfigError;

/// Built-in profiles: (name, TOML text).
pub const BUILTIN: &[(&str, &str)] = &[
    ("kurmann-pii-400", include_str!("../../profiles/kurmann-pii-400.toml")),
    ("ortiz-p4-400", include_str!("../../profiles/ortiz-p4-400.toml")),
    ("won-simos-mips", include_str!("../../profiles/won-simos-mips.toml")),
    ("modern-x86-pcie", include_str!("../../profiles/modern-x86-pcie.toml")),
];

/// A host's complete timing model.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Timing {
    /// What machine this describes, and where its numbers come from.
    #[serde(default)]
    pub description: String,
    /// Processor.
    pub cpu: CpuConfig,
    /// Memory system.
    pub memory: MemoryConfig,
    /// I/O bus between the NIC and memory.
    pub bus: BusConfig,
    /// Network interface.
    pub nic: NicConfig,
    /// Protocol stack costs per layer.
    pub costs: StackCosts,
    /// Protocol offload to a communication processor (off unless enabled).
    #[serde(default)]
    pub offload: OffloadConfig,
    /// The application's own computation beside its communication (none
    /// unless set).
    #[serde(default)]
    pub app: AppConfig,
    /// Kurmann-style zero-copy TCP/IP: driver-level fragmentation,
    /// speculative defragmentation, zero-copy OS embedding (all off unless set).
    #[serde(default)]
    pub zero_copy: ZeroCopyConfig,
}

/// How the socket layer hands a page of received (or sent) data to the
/// application (Kurmann et al., zero-copy OS embeddings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ZeroCopyOs {
    /// Copy between kernel and user buffers (the standard stack).
    #[default]
    Copy,
    /// Page remapping with copy-on-write: mapping work per page during the transfer.
    Remap,
    /// Fast buffers: pages pre-mapped once at set-up, cheaper per page.
    Fbufs,
}

/// The proposed match CAM in front of the receive descriptor lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CamMode {
    /// No CAM: every frame goes to the one receive list.
    #[default]
    Off,
    /// Two pattern/mask entries select the fast list.
    #[serde(rename = "2way")]
    TwoWay,
    /// Four pattern/mask entries select the fast list.
    #[serde(rename = "4way")]
    FourWay,
}

impl CamMode {
    /// Pattern/mask entries of the CAM (0: no CAM).
    pub fn ways(self) -> usize {
        match self {
            CamMode::Off => 0,
            CamMode::TwoWay => 2,
            CamMode::FourWay => 4,
        }
    }
}

/// Admission control for fast transfers (Fast_Req / Fast_Ack / Fast_NAck).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AdmissionMode {
    /// No control frames: every sender is fast at once.
    #[default]
    Off,
    /// The driver asks on its own when the first page-sized packet to a peer is due.
    Implicit,
    /// The application asks (an ioctl) when it opens the connection: the request
    /// goes out with the first frame to the peer.
    Explicit,
}

/// Injected interfering frames (the study's Table 1): small UDP broadcast
/// frames reaching this host's NIC at random times.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct InterferenceConfig {
    /// Number of interfering frames.
    #[serde(default)]
    pub frames: u64,
    /// They arrive uniformly at random within this window from the start of the run.
    #[serde(default)]
    pub over: Duration,
}

/// Zero-copy TCP/IP after Kurmann, Rauch and Stricker (speculative
/// defragmentation). Every switch is off by default, which leaves the
/// standard stack untouched.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ZeroCopyConfig {
    /// Driver-level fragmentation: the stack sees a virtual interface whose
    /// MTU carries one `page` of TCP data; the driver cuts each such packet
    /// into standard IPv4 fragments (two DMA descriptors per fragment).
    #[serde(default)]
    pub fragment: bool,
    /// Speculative defragmentation of received fragment trains.
    #[serde(default)]
    pub speculate: bool,
    /// OS embedding of the page at the socket layer.
    #[serde(default)]
    pub os: ZeroCopyOs,
    /// Memory page size (the zero-copy unit).
    #[serde(default = "default_page")]
    pub page: Size,
    /// User buffers are page aligned (remapping needs it; false forces the copy).
    #[serde(default = "yes")]
    pub aligned: bool,
    /// Driver: build one fragment's header and its two descriptors, per fragment sent.
    #[serde(default)]
    pub fragment_tx: Cost,
    /// Driver: check where a speculative train's payloads landed and fix the IP header, per train.
    #[serde(default)]
    pub spec_check: Cost,
    /// Driver: stop RX DMA and re-initialise the descriptor list, per failed speculation.
    #[serde(default)]
    pub list_reinit: Cost,
    /// Remap: map one page into the other address space, per page.
    #[serde(default)]
    pub remap_page: Cost,
    /// Remap: copy-on-write protection set-up and undo, per socket call moving pages.
    #[serde(default)]
    pub cow_setup: Cost,
    /// Fbufs: hand one pre-mapped page over, per page.
    #[serde(default)]
    pub fbuf_page: Cost,
    /// Fbufs: map the buffer pool once (first call that uses it).
    #[serde(default)]
    pub fbuf_setup: Cost,
    /// TCP sums a rebuilt page in software (`tcp_v4_rcv` with `ip_summed =
    /// CHECKSUM_NONE`): one read pass over the page at `memory.checksum_bandwidth`
    /// per successful speculation, because the NIC's per-frame checksum cannot
    /// cover a datagram cut into fragments and the era's driver leaves it unused.
    #[serde(default)]
    pub rx_checksum: bool,
    /// Speculation timeout: interrupt this long after the first frame of an incomplete train.
    #[serde(default = "default_spec_timeout")]
    pub timeout: Duration,
    /// Match CAM selecting the fast receive list (needs `speculate`).
    #[serde(default)]
    pub cam: CamMode,
    /// Interfering frames injected at this host's NIC.
    #[serde(default)]
    pub interference: InterferenceConfig,
    /// Admission control of fast transfers (sender and receiver side).
    #[serde(default)]
    pub admission: AdmissionMode,
    /// Driver time to handle a control frame (interrupt, handler) before it acts or answers.
    #[serde(default = "default_turnaround")]
    pub admission_turnaround: Duration,
    /// A sender not (yet) admitted sends at most one page train per this interval.
    #[serde(default = "default_admission_ms")]
    pub admission_throttle: Duration,
    /// A refused sender asks again after this long.
    #[serde(default = "default_admission_ms")]
    pub admission_retry: Duration,
    /// A receiver frees its fast slot when the admitted sender has been silent this long.
    #[serde(default = "default_admission_ms")]
    pub admission_idle: Duration,
}

impl Default for ZeroCopyConfig {
    fn default() -> Self {
        ZeroCopyConfig {
            fragment: false,
            speculate: false,
            os: ZeroCopyOs::Copy,
            page: default_page(),
            aligned: true,
            fragment_tx: Cost::default(),
            spec_check: Cost::default(),
            list_reinit: Cost::default(),
            remap_page: Cost::default(),
            cow_setup: Cost::default(),
            fbuf_page: Cost::default(),
            fbuf_setup: Cost::default(),
            rx_checksum: false,
            timeout: default_spec_timeout(),
            cam: CamMode::Off,
            interference: InterferenceConfig::default(),
            admission: AdmissionMode::Off,
            admission_turnaround: default_turnaround(),
            admission_throttle: default_admission_ms(),
            admission_retry: default_admission_ms(),
            admission_idle: default_admission_ms(),
        }
    }
}

/// 13 µs: interrupt entry/exit plus a short driver handler on a 400 MHz
/// Pentium II (estimate; two of them plus the wire give the study's ~30 µs round trip).
fn default_turnaround() -> Duration {
    Duration(13 * crate::engine::time::PS_PER_US)
}
/// 1 ms: a few hundred page trains at wire speed (estimate).
fn default_admission_ms() -> Duration {
    Duration(crate::engine::time::PS_PER_MS)
}
fn default_page() -> Size {
    Size(4096)
}
/// 100 µs: several fragment times at 1 Gb/s (12 µs each), well below a TCP timer (estimate).
fn default_spec_timeout() -> Duration {
    Duration(100 * crate::engine::time::PS_PER_US)
}

/// A CPU-intensive application: computation the application does on its
/// core for the data it moves, LAWS's `a` (Shivam & Chase 2003). The sender
/// computes each block before writing it, the receiver after reading it.
/// The work is charged to layer `app` on `cpu.app_core`; it touches no
/// memory beyond what the caches hold (no cache pollution is modelled).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AppConfig {
    /// Cycles per KiB of data written or read by each socket call.
    #[serde(default)]
    pub compute_per_kib: f64,
    /// Cycles per socket call that moves data, whatever its size.
    #[serde(default)]
    pub compute_per_call: u64,
}

impl AppConfig {
    /// Cycles of application work for one call moving `bytes`.
    pub fn cycles(&self, bytes: u64) -> u64 {
        if bytes == 0 {
            return 0;
        }
        (bytes as f64 * self.compute_per_kib / 1024.0).ceil() as u64 + self.compute_per_call
    }
}

/// Where the communication processor sits, which decides the path its
/// commands and completions take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OffloadLocation {
    /// A dedicated host core (the Ortiz study's CPU1): doorbells, command
    /// and completion queues are memory accesses through the north bridge.
    Core,
    /// A processor on the NIC: doorbells are MMIO writes and command and
    /// completion descriptors cross the I/O bus by DMA.
    Nic,
}

/// How the communication processor learns of work (NIC events, commands).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OffloadNotify {
    /// It runs nothing but the stack and polls its queues and the NIC in
    /// a loop: no interrupt costs, work is noticed at the next loop turn.
    Poll,
    /// NIC interrupts and doorbells interrupt it (with the NIC's moderation).
    Interrupt,
}

/// Offload: which processor copies data between the application's buffer
/// and the socket buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SocketCopy {
    /// The application core, inside its socket call.
    #[default]
    App,
    /// The communication processor, after the application's call.
    Comm,
}

/// Protocol offload: the TCP/IP stack (smoltcp with its cost model) runs on
/// a communication processor with its own clock and memory delay; the
/// application core only makes calls, posts commands and takes completions.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OffloadConfig {
    /// Run the stack on the communication processor (false: one core runs
    /// application and stack, the study's "no offload").
    #[serde(default)]
    pub enabled: bool,
    /// Core index of the communication processor (its clock is `clock_ratio` × `cpu.clock`).
    #[serde(default = "one")]
    pub core: u32,
    /// Where it sits.
    #[serde(default = "default_location")]
    pub location: OffloadLocation,
    /// Its clock as a fraction of the host CPU's (the study's NIC-processor speed, 0.01 to 4).
    #[serde(default = "unit")]
    pub clock_ratio: f64,
    /// "Offload x": its memory accesses take x times the reference delay (`memory.latency`), 1 to 1000.
    #[serde(default = "unit")]
    pub memory_multiplier: f64,
    /// How it learns of work.
    #[serde(default = "default_notify")]
    pub notify: OffloadNotify,
    /// One turn of its polling loop (poll mode) at the host's clock: work
    /// waits for the turn to end. The turn's instructions take
    /// `1 / clock_ratio` as long on a slower processor.
    #[serde(default)]
    pub poll_interval: Duration,
    /// Memory accesses in one turn of the polling loop (reading the NIC's
    /// status block and the command ring): each adds the processor's memory
    /// delay (x times the reference) to the turn.
    #[serde(default)]
    pub poll_mem: u64,
    /// Where the copy between the application's buffer and the socket
    /// buffers runs: `app` (the application core, in its system call) or
    /// `comm` (the communication processor, whose memory delay and clock
    /// then price it).
    #[serde(default)]
    pub socket_copy: SocketCopy,
    /// Application core: build a command (descriptor) and ring the doorbell, per socket call.
    #[serde(default)]
    pub command: Cost,
    /// Communication processor: fetch and decode a command.
    #[serde(default)]
    pub command_rx: Cost,
    /// Communication processor: post a completion for the application.
    #[serde(default)]
    pub completion: Cost,
    /// Application core: completion interrupt handler body (entry and exit are in `cpu`).
    #[serde(default)]
    pub completion_rx: Cost,
    /// Size of a command or completion descriptor.
    #[serde(default = "default_command_size")]
    pub descriptor: Size,
}

impl Default for OffloadConfig {
    fn default() -> Self {
        OffloadConfig {
            enabled: false,
            core: 1,
            location: default_location(),
            clock_ratio: 1.0,
            memory_multiplier: 1.0,
            notify: default_notify(),
            poll_interval: Duration(0),
            poll_mem: 0,
            socket_copy: SocketCopy::App,
            command: Cost::default(),
            command_rx: Cost::default(),
            completion: Cost::default(),
            completion_rx: Cost::default(),
            descriptor: default_command_size(),
        }
    }
}

fn default_location() -> OffloadLocation {
    OffloadLocation::Core
}
fn default_notify() -> OffloadNotify {
    OffloadNotify::Poll
}
fn unit() -> f64 {
    1.0
}
fn default_command_size() -> Size {
    Size(64)
}

/// The processor.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CpuConfig {
    /// Core clock.
    pub clock: Frequency,
    /// Number of cores.
    #[serde(default = "one")]
    pub cores: u32,
    /// Cycles to enter an interrupt handler (save state, vector).
    pub interrupt_entry: u64,
    /// Cycles to leave it (restore, return).
    pub interrupt_exit: u64,
    /// Core running the application and its system calls.
    #[serde(default)]
    pub app_core: u32,
    /// Core taking the NIC's interrupts and running the receive stack.
    #[serde(default)]
    pub irq_core: u32,
}

fn one() -> u32 {
    1
}

/// The memory system.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryConfig {
    /// CPU cycles per main-memory access (a `Cost`'s `mem` term).
    pub latency: u64,
    /// memcpy rate for data not in cache.
    pub copy_bandwidth: Bandwidth,
    /// memcpy rate for data in cache (working set within `cache_size`).
    pub cached_copy_bandwidth: Bandwidth,
    /// Software checksum rate.
    pub checksum_bandwidth: Bandwidth,
    /// Largest cache; a buffer of at most this size that was touched last is hot.
    pub cache_size: Size,
    /// Peak memory bandwidth, shared by DMA and CPU copies.
    pub bandwidth: Bandwidth,
    /// Treat every buffer as cold (NetPIPE `-I`).
    #[serde(default)]
    pub cold_cache: bool,
    /// Price copies and checksums per cache line, in cycles, instead of by
    /// the bandwidths above (none: the bandwidths). A machine described in
    /// cycles (the Won study's SimOS Mipsy) then costs the same cycles at
    /// any clock.
    #[serde(default)]
    pub lines: Option<LineModel>,
}

/// Copies and checksums on an in-order core with blocking caches (SimOS
/// Mipsy): every L1 line of data costs the loop's instructions (one per
/// cycle) plus the wait for the line wherever it is: nothing in L1,
/// `l2_latency` in L2, and from memory one `memory.latency` per L2 line
/// (its other L1 lines then come from L2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LineModel {
    /// L1 data cache size; a buffer of at most half of it that was just
    /// touched is still in L1 (the other half holds the other buffer).
    pub l1_size: Size,
    /// L1 line size.
    pub l1_line: Size,
    /// L2 line size (a multiple of `l1_line`).
    pub l2_line: Size,
    /// Cycles to fill an L1 line from L2.
    pub l2_latency: u64,
    /// memcpy instructions per L1 line.
    pub copy_per_line: u64,
    /// Checksum loop instructions per L1 line.
    pub checksum_per_line: u64,
}

/// Where a buffer's lines are when a copy or checksum starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Residence {
    /// Just touched by this CPU: in L1 up to half its size, else in L2.
    Hot,
    /// Written by DMA (or never touched): in memory.
    Memory,
}

impl LineModel {
    /// Cycles to wait for the L1 lines of `bytes` that live at `at`.
    fn fetch(&self, bytes: u64, at: Residence, memory_latency: u64) -> u64 {
        let lines = bytes.div_ceil(self.l1_line.0.max(1));
        match at {
            Residence::Hot if bytes <= self.l1_size.0 / 2 => 0,
            Residence::Hot => lines * self.l2_latency,
            Residence::Memory => {
                let l2_lines = bytes.div_ceil(self.l2_line.0.max(1));
                l2_lines * memory_latency + (lines - l2_lines.min(lines)) * self.l2_latency
            }
        }
    }

    /// Cycles to copy `bytes` from `src` into a destination buffer that is
    /// hot (recycled kernel or user buffers; write-allocate fills its lines).
    pub fn copy(&self, bytes: u64, src: Residence, memory_latency: u64) -> u64 {
        let lines = bytes.div_ceil(self.l1_line.0.max(1));
        lines * self.copy_per_line
            + self.fetch(bytes, src, memory_latency)
            + self.fetch(bytes, Residence::Hot, memory_latency)
    }

    /// Cycles to checksum `bytes` that a copy has just touched (MIPS Linux
    /// checksums the copied data in a second pass).
    pub fn checksum(&self, bytes: u64, memory_latency: u64) -> u64 {
        let lines = bytes.div_ceil(self.l1_line.0.max(1));
        lines * self.checksum_per_line + self.fetch(bytes, Residence::Hot, memory_latency)
    }
}

/// Cost of one step of the stack: `cycles + mem × memory.latency`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Cost {
    /// Core cycles (instructions at about one per cycle, cache hits included).
    #[serde(default)]
    pub cycles: u64,
    /// Main-memory accesses.
    #[serde(default)]
    pub mem: u64,
}

impl Cost {
    /// Cycles on a machine whose memory access costs `latency` cycles.
    pub fn total(self, latency: u64) -> u64 {
        self.cycles + self.mem * latency
    }
}

/// Per-layer costs of the Linux send and receive paths.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StackCosts {
    /// System call entry and exit, per call.
    #[serde(default)]
    pub syscall: Cost,
    /// Socket layer of a send call.
    #[serde(default)]
    pub socket_send: Cost,
    /// Socket layer of a receive call.
    #[serde(default)]
    pub socket_recv: Cost,
    /// Waking the application when data arrives, per wake-up.
    #[serde(default)]
    pub wakeup: Cost,
    /// TCP output, per segment (data or ACK).
    #[serde(default)]
    pub tcp_tx: Cost,
    /// TCP input, per segment.
    #[serde(default)]
    pub tcp_rx: Cost,
    /// UDP output, per datagram.
    #[serde(default)]
    pub udp_tx: Cost,
    /// UDP input, per datagram.
    #[serde(default)]
    pub udp_rx: Cost,
    /// IP output, per packet.
    #[serde(default)]
    pub ip_tx: Cost,
    /// IP input, per packet.
    #[serde(default)]
    pub ip_rx: Cost,
    /// IP fragmentation, per fragment made.
    #[serde(default)]
    pub ip_frag: Cost,
    /// IP defragmentation, per fragment received.
    #[serde(default)]
    pub ip_defrag: Cost,
    /// Device layer on send (queueing discipline), per packet.
    #[serde(default)]
    pub device_tx: Cost,
    /// Device layer on receive (protocol demultiplexing), per packet.
    #[serde(default)]
    pub device_rx: Cost,
    /// Driver transmit: descriptor set-up and doorbell, per packet.
    #[serde(default)]
    pub driver_tx: Cost,
    /// Driver receive: descriptor processing, per packet.
    #[serde(default)]
    pub driver_rx: Cost,
    /// Driver reclaiming a sent packet's descriptor, per packet.
    #[serde(default)]
    pub driver_tx_clean: Cost,
    /// Driver posting a fresh receive buffer, per buffer.
    #[serde(default)]
    pub driver_refill: Cost,
    /// Interrupt handler body (entry and exit are in `cpu`), per interrupt.
    #[serde(default)]
    pub interrupt: Cost,
    /// VIA library, `VipPostSend`: build the descriptor in registered
    /// memory, queue it on the send queue, ring the doorbell, per call.
    #[serde(default)]
    pub via_post_send: Cost,
    /// VIA library, receive: take the completion off the receive completion
    /// queue and post the next receive descriptor, per message.
    #[serde(default)]
    pub via_post_recv: Cost,
    /// VIA transport, send: fetch the descriptor, build the VIA header of a
    /// fragment (fragmentation to the MTU), per frame.
    #[serde(default)]
    pub via_tx: Cost,
    /// VIA transport, receive: demultiplex a frame to its VI and check its
    /// sequence, per frame.
    #[serde(default)]
    pub via_rx: Cost,
    /// VIA transport: virtual-to-physical translation of one page of
    /// registered memory, per page a frame touches.
    #[serde(default)]
    pub via_translate: Cost,
    /// VIA transport: defragmentation, per frame of a message of more than one frame.
    #[serde(default)]
    pub via_defrag: Cost,
    /// VIA: the fast trap that takes a `VipPostSend` or `VipPostRecv` into
    /// the kernel agent (the doorbell of an Ethernet NIC without VIA
    /// support), entry and exit, per call.
    #[serde(default)]
    pub via_trap: Cost,
    /// Driver reclaiming a sent VIA frame's descriptor and completing its
    /// send descriptor, per frame (instead of `driver_tx_clean`: no sk_buff
    /// to free).
    #[serde(default)]
    pub via_tx_done: Cost,
    /// IP defragmentation rebuilds the datagram by copying every fragment's
    /// data into a new buffer when its last fragment arrives (Linux 2.2's
    /// `ip_glue`); false: fragments are chained without a copy.
    #[serde(default)]
    pub ip_defrag_copy: bool,
    /// Linux GRO in the driver, per received frame (`lro = "gro"`).
    #[serde(default)]
    pub gro_rx: Cost,
    /// Linux software LRO in the driver, per received frame (`lro = "software"`).
    #[serde(default)]
    pub lro_rx: Cost,
}

/// What the NIC does when its receive FIFO is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Overflow {
    /// Drop the arriving frame and count it.
    Drop,
    /// Hold the link (802.3x PAUSE): the sender's queue fills instead.
    Backpressure,
}

/// Interrupt moderation (the e1000's ITR, RDTR/RADV and TIDV/TADV).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Moderation {
    /// Interrupt once this many received packets are pending (1: every packet).
    #[serde(default = "one")]
    pub rx_packets: u32,
    /// Packet timer: interrupt this long after the last packet if no other came (RDTR).
    #[serde(default)]
    pub rx_delay: Duration,
    /// Absolute timer: interrupt at most this long after the first pending packet (RADV).
    #[serde(default)]
    pub rx_abs_delay: Duration,
    /// Delay of a transmit-completion interrupt (TADV).
    #[serde(default)]
    pub tx_delay: Duration,
    /// Minimum time between interrupts (1 / ITR).
    #[serde(default)]
    pub min_interval: Duration,
}

impl Default for Moderation {
    fn default() -> Self {
        Moderation {
            rx_packets: 1,
            rx_delay: Duration(0),
            rx_abs_delay: Duration(0),
            tx_delay: Duration(0),
            min_interval: Duration(0),
        }
    }
}

/// The network interface.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NicConfig {
    /// Transmit descriptor ring size (power of two).
    pub tx_ring: u32,
    /// Receive descriptor ring size (power of two).
    pub rx_ring: u32,
    /// Size of one descriptor as fetched and written back over the bus.
    pub descriptor: Size,
    /// On-NIC receive FIFO.
    pub rx_fifo: Size,
    /// What a full receive FIFO does.
    #[serde(default = "default_overflow")]
    pub overflow: Overflow,
    /// The DMA engine's own rate limit (its clock × width); none: the bus limits.
    #[serde(default)]
    pub dma_rate: Option<Bandwidth>,
    /// IP/TCP/UDP checksums computed and checked by the NIC.
    pub checksum_offload: bool,
    /// TCP segmentation offload: the stack hands the NIC segments of up to
    /// 64 KiB, which it cuts to the MSS (needs `checksum_offload`).
    #[serde(default)]
    pub tso: bool,
    /// NAPI: after an interrupt, poll the ring with interrupts off until it is empty.
    #[serde(default = "yes")]
    pub napi: bool,
    /// Packets per NAPI poll before other work gets a turn.
    #[serde(default = "default_budget")]
    pub napi_budget: u32,
    /// Interrupt moderation.
    #[serde(default)]
    pub moderation: Moderation,
    /// Receive coalescing of TCP segments before the stack: `off`, `nic`
    /// (the NIC's LRO engine on its own core, `lro_engine`), `gro` (Linux
    /// GRO in the driver, `costs.gro_rx` per frame) or `software` (Linux
    /// software LRO in the driver, `costs.lro_rx` per frame).
    #[serde(default)]
    pub lro: LroMode,
    /// The NIC-resident LRO engine and the core that runs it (`lro = "nic"`).
    #[serde(default)]
    pub lro_engine: LroEngine,
}

/// Where received TCP segments are coalesced.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LroMode {
    /// No coalescing: every frame climbs the stack on its own.
    #[default]
    Off,
    /// The NIC's LRO engine (Elbeshti et al. 2012) merges before the DMA.
    Nic,
    /// Linux GRO in the driver's poll loop, flushed at the end of each batch.
    Gro,
    /// Linux software LRO (`inet_lro`) in the driver, flushed at the end of each batch.
    Software,
}

/// The NIC LRO engine (Elbeshti et al., ISCIT 2012): its memories and the
/// single-issue core that runs it. Defaults are the study's.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct LroEngine {
    /// CAM entries: streams coalesced at once (study: 64).
    pub cam_entries: u32,
    /// RB memory pages (study: 64).
    pub pages: u32,
    /// Size of one RB page, the largest merged frame (study: 30 KB, 20 MTU
    /// packets; 30 KiB holds twenty 1514-byte frames).
    pub page_size: Size,
    /// Flush every held stream after this many packets (study: 20, the
    /// interrupt-moderation window).
    pub flush_packets: u32,
    /// Flush held streams when no packet came for this long (estimate: the
    /// study flushes by count only; a timer keeps a stalled stream from
    /// waiting forever, at about twenty 1500-byte frame times at 10 Gb/s).
    pub flush_timeout: Duration,
    /// The engine core's clock (estimate: 1 GHz; the study searches the
    /// minimum for each line rate, see `nicsim reproduce elbeshti`).
    pub core_clock: Frequency,
    /// DMA and local-bus clock as a multiple of the core's (study: 5x).
    pub dma_ratio: f64,
    /// Receive buffers between the line and the core (study: the RBI's two).
    pub rbi_buffers: u32,
}

impl Default for LroEngine {
    fn default() -> Self {
        LroEngine {
            cam_entries: 64,
            pages: 64,
            page_size: Size(30 * 1024),
            flush_packets: 20,
            flush_timeout: Duration(20_000_000),
            core_clock: Frequency(1_000_000_000),
            dma_ratio: 5.0,
            rbi_buffers: 2,
        }
    }
}

fn default_overflow() -> Overflow {
    Overflow::Drop
}
fn yes() -> bool {
    true
}
fn default_budget() -> u32 {
    64
}

impl Timing {
    /// Check ranges and combinations; `path` is the host's path (`hosts[0]`).
    pub fn validate(&self, path: &str) -> Result<(), ConfigError> {
        let err = |field: &str, reason: String| Err(ConfigError::new(format!("{path}.{field}"), reason));
        let c = &self.cpu;
        if !(1_000_000..=100_000_000_000).contains(&c.clock.0) {
            return err("cpu.clock", format!("must be 1MHz to 100GHz, got {}", c.clock));
        }
        if !(1..=256).contains(&c.cores) {
            return err("cpu.cores", format!("must be 1 to 256, got {}", c.cores));
        }
        if c.app_core >= c.cores {
            return err("cpu.app_core", format!("core {} does not exist (cores = {})", c.app_core, c.cores));
        }
        if c.irq_core >= c.cores {
            return err("cpu.irq_core", format!("core {} does not exist (cores = {})", c.irq_core, c.cores));
        }
        let a = &self.app;
        if !(a.compute_per_kib.is_finite() && (0.0..=1e9).contains(&a.compute_per_kib)) {
            return err("app.compute_per_kib", format!("must be 0 to 1e9 cycles, got {}", a.compute_per_kib));
        }
        if a.compute_per_call > 1_000_000_000 {
            return err("app.compute_per_call", format!("must be at most 1e9 cycles, got {}", a.compute_per_call));
        }
        let m = &self.memory;
        for (field, bw) in [
            ("memory.copy_bandwidth", m.copy_bandwidth),
            ("memory.cached_copy_bandwidth", m.cached_copy_bandwidth),
            ("memory.checksum_bandwidth", m.checksum_bandwidth),
            ("memory.bandwidth", m.bandwidth),
        ] {
            if bw.0 == 0 {
                return err(field, "must be above zero".into());
            }
        }
        if m.latency > 100_000 {
            return err("memory.latency", format!("must be at most 100000 cycles, got {}", m.latency));
        }
        if let Some(l) = &m.lines {
            if !(4..=4096).contains(&l.l1_line.0) || !l.l1_line.0.is_power_of_two() {
                return err(
                    "memory.lines.l1_line",
                    format!("must be a power of two from 4B to 4KiB, got {}", l.l1_line),
                );
            }
            if l.l2_line.0 < l.l1_line.0 || l.l2_line.0 % l.l1_line.0 != 0 || l.l2_line.0 > 4096 {
                return err(
                    "memory.lines.l2_line",
                    format!("must be a multiple of l1_line ({}) up to 4KiB, got {}", l.l1_line, l.l2_line),
                );
            }
            if l.l1_size.0 < l.l1_line.0 {
                return err("memory.lines.l1_size", format!("must hold at least one line, got {}", l.l1_size));
            }
            if l.l2_latency > 100_000 || l.copy_per_line > 100_000 || l.checksum_per_line > 100_000 {
                return err("memory.lines", "cycle counts must be at most 100000".into());
            }
        }
        let n = &self.nic;
        for (field, ring) in [("nic.tx_ring", n.tx_ring), ("nic.rx_ring", n.rx_ring)] {
            if !ring.is_power_of_two() || !(8..=65536).contains(&ring) {
                return err(field, format!("must be a power of two from 8 to 65536, got {ring}"));
            }
        }
        if !(4..=256).contains(&n.descriptor.0) {
            return err("nic.descriptor", format!("must be 4B to 256B, got {}", n.descriptor));
        }
        if n.rx_fifo.0 < 9018 {
            return err("nic.rx_fifo", format!("must hold at least one jumbo frame (9018B), got {}", n.rx_fifo));
        }
        if n.dma_rate.is_some_and(|r| r.0 == 0) {
            return err("nic.dma_rate", "must be above zero".into());
        }
        if n.tso && !n.checksum_offload {
            return err(
                "nic.tso",
                "needs nic.checksum_offload = true (the NIC fills the checksums of the segments it cuts)".into(),
            );
        }
        if n.napi_budget == 0 {
            return err("nic.napi_budget", "must be at least 1".into());
        }
        if n.moderation.rx_packets == 0 {
            return err("nic.moderation.rx_packets", "must be at least 1".into());
        }
        let m = &n.moderation;
        for (field, d) in [
            ("rx_delay", m.rx_delay),
            ("rx_abs_delay", m.rx_abs_delay),
            ("tx_delay", m.tx_delay),
            ("min_interval", m.min_interval),
        ] {
            // Real NICs cap these at tens of milliseconds; 1 s keeps time arithmetic bounded.
            if d.0 > crate::engine::time::PS_PER_S {
                return err(&format!("nic.moderation.{field}"), format!("must be at most 1s, got {d}"));
            }
        }
        let e = &n.lro_engine;
        for (field, v, max) in [
            ("cam_entries", e.cam_entries, 4096),
            ("pages", e.pages, 4096),
            ("flush_packets", e.flush_packets, 4096),
            ("rbi_buffers", e.rbi_buffers, 64),
        ] {
            if !(1..=max).contains(&v) {
                return err(&format!("nic.lro_engine.{field}"), format!("must be 1 to {max}, got {v}"));
            }
        }
        if !(1518..=1_048_576).contains(&e.page_size.0) {
            return err("nic.lro_engine.page_size", format!("must be 1518B to 1MiB, got {}", e.page_size));
        }
        if e.flush_timeout.0 == 0 || e.flush_timeout.0 > crate::engine::time::PS_PER_S {
            return err(
                "nic.lro_engine.flush_timeout",
                format!("must be above 0 and at most 1s, got {}", e.flush_timeout),
            );
        }
        if !(1_000_000..=100_000_000_000).contains(&e.core_clock.0) {
            return err("nic.lro_engine.core_clock", format!("must be 1MHz to 100GHz, got {}", e.core_clock));
        }
        if !(e.dma_ratio.is_finite() && (0.1..=100.0).contains(&e.dma_ratio)) {
            return err("nic.lro_engine.dma_ratio", format!("must be 0.1 to 100, got {}", e.dma_ratio));
        }
        let o = &self.offload;
        if o.enabled {
            if o.core >= c.cores {
                return err("offload.core", format!("core {} does not exist (cpu.cores = {})", o.core, c.cores));
            }
            if o.core == c.app_core {
                return err("offload.core", format!("must differ from cpu.app_core ({})", c.app_core));
            }
        }
        if !(0.01..=4.0).contains(&o.clock_ratio) {
            return err("offload.clock_ratio", format!("must be 0.01 to 4, got {}", o.clock_ratio));
        }
        if !(0.1..=1000.0).contains(&o.memory_multiplier) {
            return err("offload.memory_multiplier", format!("must be 0.1 to 1000, got {}", o.memory_multiplier));
        }
        if o.poll_mem > 1000 {
            return err("offload.poll_mem", format!("must be at most 1000 accesses, got {}", o.poll_mem));
        }
        if o.poll_interval.0 > crate::engine::time::PS_PER_S {
            return err("offload.poll_interval", format!("must be at most 1s, got {}", o.poll_interval));
        }
        if !(4..=4096).contains(&o.descriptor.0) {
            return err("offload.descriptor", format!("must be 4B to 4096B, got {}", o.descriptor));
        }
        let z = &self.zero_copy;
        if !z.page.0.is_power_of_two() || !(1024..=16384).contains(&z.page.0) {
            return err("zero_copy.page", format!("must be a power of two from 1KiB to 16KiB, got {}", z.page));
        }
        if z.timeout.0 == 0 || z.timeout.0 > crate::engine::time::PS_PER_S {
            return err("zero_copy.timeout", format!("must be above zero and at most 1s, got {}", z.timeout));
        }
        if z.fragment && n.tso {
            return err(
                "zero_copy.fragment",
                "cannot be combined with nic.tso (the driver cuts page-sized packets into IP fragments, TSO cuts TCP segments)"
                    .into(),
            );
        }
        if z.speculate && n.lro != LroMode::Off {
            return err(
                "zero_copy.speculate",
                "cannot be combined with nic.lro (speculation expects each page's fragments as they came off the wire)"
                    .into(),
            );
        }
        for (field, d) in [
            ("admission_turnaround", z.admission_turnaround),
            ("admission_throttle", z.admission_throttle),
            ("admission_retry", z.admission_retry),
            ("admission_idle", z.admission_idle),
        ] {
            if d.0 == 0 || d.0 > crate::engine::time::PS_PER_S {
                return err(&format!("zero_copy.{field}"), format!("must be above zero and at most 1s, got {d}"));
            }
        }
        if z.cam != CamMode::Off && !z.speculate {
            return err(
                "zero_copy.cam",
                "needs zero_copy.speculate = true (the CAM selects the speculative list)".into(),
            );
        }
        if z.interference.frames > 10_000_000 {
            return err(
                "zero_copy.interference.frames",
                format!("must be at most 10000000, got {}", z.interference.frames),
            );
        }
        if z.interference.frames > 0
            && (z.interference.over.0 == 0 || z.interference.over.0 > 3600 * crate::engine::time::PS_PER_S)
        {
            return err(
                "zero_copy.interference.over",
                format!("must be above zero and at most 1h when frames are injected, got {}", z.interference.over),
            );
        }
        self.bus.validate(&format!("{path}.bus"))
    }

    /// The communication processor's core, when the stack is offloaded.
    pub fn comm_core(&self) -> Option<usize> {
        self.offload.enabled.then_some(self.offload.core as usize)
    }

    /// The core that runs the stack's receive work and takes NIC interrupts.
    pub fn stack_core(&self) -> usize {
        self.comm_core().unwrap_or(self.cpu.irq_core as usize)
    }

    /// Clock of `core` in Hz (the communication processor runs at `clock_ratio`).
    pub fn core_hz(&self, core: usize) -> u64 {
        if self.comm_core() == Some(core) {
            ((self.cpu.clock.0 as f64 * self.offload.clock_ratio).round() as u64).max(1)
        } else {
            self.cpu.clock.0
        }
    }

    /// One memory access in `core`'s cycles: the reference delay
    /// (`memory.latency` host cycles), times x on the communication processor.
    pub fn latency_on(&self, core: usize) -> u64 {
        if self.comm_core() == Some(core) {
            let o = &self.offload;
            (self.memory.latency as f64 * o.memory_multiplier * o.clock_ratio).round() as u64
        } else {
            self.memory.latency
        }
    }

    /// Cycles of `cost` on `core`.
    pub fn cycles_on(&self, core: usize, cost: Cost) -> u64 {
        cost.total(self.latency_on(core))
    }

    /// Cycles to copy `bytes` on this machine (hot: the data is in cache).
    pub fn copy_cycles(&self, bytes: u64, hot: bool) -> u64 {
        if let Some(l) = &self.memory.lines {
            let src = if hot && !self.memory.cold_cache { Residence::Hot } else { Residence::Memory };
            return l.copy(bytes, src, self.memory.latency);
        }
        let bw =
            if hot && !self.memory.cold_cache { self.memory.cached_copy_bandwidth } else { self.memory.copy_bandwidth };
        per_byte_cycles(bytes, bw, self.cpu.clock)
    }

    /// Cycles of `core` to copy `bytes` (hot: the data is in cache). On the
    /// communication processor the copy's instructions (the cached rate)
    /// take the same cycles and its memory stalls (the rest of the uncached
    /// rate) x times the reference delay, counted in its own cycles.
    pub fn copy_cycles_on(&self, core: usize, bytes: u64, hot: bool) -> u64 {
        if self.comm_core() != Some(core) {
            return self.copy_cycles(bytes, hot);
        }
        let instr = per_byte_cycles(bytes, self.memory.cached_copy_bandwidth, self.cpu.clock);
        if hot && !self.memory.cold_cache {
            return instr;
        }
        let stall = self.copy_cycles(bytes, false).saturating_sub(instr) as f64;
        let o = &self.offload;
        instr + (stall * o.memory_multiplier * o.clock_ratio).round() as u64
    }

    /// One turn of the communication processor's polling loop: its
    /// instructions (`poll_interval` at the host clock) on its own clock
    /// and `poll_mem` memory accesses at its memory delay.
    pub fn poll_turn(&self) -> Duration {
        let o = &self.offload;
        let instr = o.poll_interval.0 as f64 / o.clock_ratio;
        let per_cycle = crate::engine::time::PS_PER_S as f64 / self.cpu.clock.0 as f64;
        let mem = (o.poll_mem * self.memory.latency) as f64 * o.memory_multiplier * per_cycle;
        Duration((instr + mem).round() as u64)
    }

    /// Cycles to checksum `bytes` in software.
    pub fn checksum_cycles(&self, bytes: u64) -> u64 {
        if let Some(l) = &self.memory.lines {
            return l.checksum(bytes, self.memory.latency);
        }
        per_byte_cycles(bytes, self.memory.checksum_bandwidth, self.cpu.clock)
    }

    /// Cycles to checksum `bytes` in software on `core` (the communication
    /// processor streams memory x times slower, on its own clock).
    pub fn checksum_cycles_on(&self, core: usize, bytes: u64) -> u64 {
        if self.comm_core() != Some(core) {
            return self.checksum_cycles(bytes);
        }
        let slow = self.memory.checksum_bandwidth.0 as f64 / self.offload.memory_multiplier;
        let bw = Bandwidth((slow.round() as u64).max(1));
        per_byte_cycles(bytes, bw, Frequency(self.core_hz(core)))
    }

    /// Cycles of `cost` on this machine.
    pub fn cycles(&self, cost: Cost) -> u64 {
        cost.total(self.memory.latency)
    }
}

/// `bytes` at `bw` (bit/s) on a `clock` core, in whole cycles (rounded up).
fn per_byte_cycles(bytes: u64, bw: Bandwidth, clock: Frequency) -> u64 {
    (u128::from(bytes) * 8 * u128::from(clock.0)).div_ceil(u128::from(bw.0)) as u64
}

fn merge(base: &mut toml::Table, over: &toml::Table) {
    for (k, v) in over {
        match (base.get_mut(k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
}

/// The text of built-in profile `name`.
pub fn builtin(name: &str) -> Option<&'static str> {
    BUILTIN.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// Resolve a host's timing: profile `name` with `overrides` (section name →
/// table) merged in; errors name fields under `path` (e.g. `hosts[0]`).
pub fn resolve(path: &str, name: &str, overrides: &[(&str, &toml::Table)]) -> Result<Timing, ConfigError> {
    let Some(text) = builtin(name) else {
        let known: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
        return Err(ConfigError::new(
            format!("{path}.profile"),
            format!("no built-in profile \"{name}\"; known: {}", known.join(", ")),
        ));
    };
    let mut table: toml::Table =
        text.parse().map_err(|e| ConfigError::new(format!("{path}.profile"), format!("profile \"{name}\": {e}")))?;
    for (section, over) in overrides {
        // A bus of another kind replaces the profile's bus rather than
        // mixing knobs of two kinds.
        let other_kind = over.get("kind").is_some_and(|k| table.get(*section).and_then(|b| b.get("kind")) != Some(k));
        if other_kind {
            table.insert((*section).into(), toml::Value::Table((*over).clone()));
            continue;
        }
        let mut wrapper = toml::Table::new();
        wrapper.insert((*section).into(), toml::Value::Table((*over).clone()));
        merge(&mut table, &wrapper);
    }
    let timing: Timing = serde_path_to_error::deserialize(toml::Value::Table(table)).map_err(|e| {
        let field = e.path().to_string();
        ConfigError::new(format!("{path}.{field}"), e.into_inner().to_string())
    })?;
    timing.validate(path)?;
    Ok(timing)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_profile_loads_and_validates() {
        for (name, _) in BUILTIN {
            let t = resolve("hosts[0]", name, &[]).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(!t.description.is_empty(), "{name} says what it describes");
        }
    }

    #[test]
    fn overrides_replace_single_fields() {
        let over: toml::Table = "clock = \"800MHz\"".parse().unwrap();
        let t = resolve("hosts[1]", "kurmann-pii-400", &[("cpu", &over)]).unwrap();
        assert_eq!(t.cpu.clock, Frequency(800_000_000));
        let base = resolve("hosts[1]", "kurmann-pii-400", &[]).unwrap();
        assert_eq!(t.cpu.interrupt_entry, base.cpu.interrupt_entry);
    }

    #[test]
    fn bad_overrides_name_the_field() {
        let over: toml::Table = "clokc = \"800MHz\"".parse().unwrap();
        let e = resolve("hosts[1]", "kurmann-pii-400", &[("cpu", &over)]).unwrap_err();
        assert_eq!(e.path, "hosts[1].cpu.clokc");
        let over: toml::Table = "rx_ring = 100".parse().unwrap();
        let e = resolve("hosts[0]", "kurmann-pii-400", &[("nic", &over)]).unwrap_err();
        assert_eq!(e.path, "hosts[0].nic.rx_ring");
        assert!(e.reason.contains("power of two"), "{}", e.reason);
        let over: toml::Table = "clock = \"fast\"".parse().unwrap();
        let e = resolve("hosts[0]", "kurmann-pii-400", &[("cpu", &over)]).unwrap_err();
        assert_eq!(e.path, "hosts[0].cpu.clock");
        let e = resolve("hosts[0]", "pentium", &[]).unwrap_err();
        assert_eq!(e.path, "hosts[0].profile");
    }

    #[test]
    fn a_copy_on_the_communication_processor_slows_with_x_and_its_clock() {
        let over: toml::Table = "enabled = true\nsocket_copy = \"comm\"".parse().unwrap();
        let t = resolve("h", "ortiz-p4-400", &[("offload", &over)]).unwrap();
        let comm = t.comm_core().unwrap();
        // 8000 bytes: 4000 cycles of moves at 800 MB/s, 10 000 in all at 320 MB/s (400 MHz).
        assert_eq!(t.copy_cycles(8000, false), 10_000);
        assert_eq!(t.copy_cycles_on(comm, 8000, false), 10_000, "x = 1 at full speed: the host's cost");
        assert_eq!(t.copy_cycles_on(comm, 8000, true), 4_000, "a cached copy has no stalls");
        let mut slow = t.clone();
        slow.offload.memory_multiplier = 10.0;
        assert_eq!(slow.copy_cycles_on(comm, 8000, false), 4_000 + 60_000, "stalls x 10");
        let mut quarter = t.clone();
        quarter.offload.clock_ratio = 0.25;
        // Stalls keep their time (6000 host cycles = 1500 of its own); moves keep their cycles.
        assert_eq!(quarter.copy_cycles_on(comm, 8000, false), 4_000 + 1_500);
        assert_eq!(quarter.core_hz(comm), 100_000_000);
        assert_eq!(t.copy_cycles_on(0, 8000, false), 10_000, "CPU0 copies at the host's rates");
    }

    #[test]
    fn the_polling_turn_scales_with_clock_and_memory_delay() {
        let t = resolve("h", "ortiz-p4-400", &[]).unwrap();
        // 500 ns of instructions and two 10-cycle accesses at 400 MHz (50 ns).
        assert_eq!(t.poll_turn(), Duration(550_000));
        let mut s = t.clone();
        s.offload.clock_ratio = 0.25;
        s.offload.memory_multiplier = 10.0;
        assert_eq!(s.poll_turn(), Duration(2_000_000 + 500_000));
        let over: toml::Table = "poll_mem = 5000".parse().unwrap();
        let e = resolve("hosts[0]", "ortiz-p4-400", &[("offload", &over)]).unwrap_err();
        assert_eq!(e.path, "hosts[0].offload.poll_mem");
    }

    #[test]
    fn copy_cost_is_bytes_over_bandwidth_times_clock() {
        let t = resolve("h", "kurmann-pii-400", &[]).unwrap();
        // 92 MB/s memcpy at 400 MHz: 4096 bytes take 44.5 µs = 17 809 cycles.
        assert_eq!(t.memory.copy_bandwidth, Bandwidth(92_000_000 * 8));
        assert_eq!(t.copy_cycles(4096, false), (4096u64 * 400).div_ceil(92));
        assert_eq!(Cost { cycles: 100, mem: 3 }.total(10), 130);
    }

    #[test]
    fn the_line_model_prices_copies_in_cycles_whatever_the_clock() {
        let l = LineModel {
            l1_size: Size(32 * 1024),
            l1_line: Size(32),
            l2_line: Size(128),
            l2_latency: 10,
            copy_per_line: 20,
            checksum_per_line: 35,
        };
        // 256 B in L1: 8 lines of 20 instructions.
        assert_eq!(l.copy(256, Residence::Hot, 100), 160);
        // 256 B from memory: 2 L2 lines at 100, their other 6 L1 lines from L2 at 10.
        assert_eq!(l.copy(256, Residence::Memory, 100), 160 + 200 + 60);
        // 32 KiB hot is more than half the L1: source and destination lines come from L2.
        assert_eq!(l.copy(32 * 1024, Residence::Hot, 100), 1024 * 20 + 2 * 1024 * 10);
        assert_eq!(l.checksum(256, 100), 8 * 35);
        let t = resolve("h", "won-simos-mips", &[]).unwrap();
        let over: toml::Table = "clock = \"400MHz\"".parse().unwrap();
        let fast = resolve("h", "won-simos-mips", &[("cpu", &over)]).unwrap();
        for bytes in [4, 1472, 4096, 32768] {
            assert_eq!(t.copy_cycles(bytes, false), fast.copy_cycles(bytes, false));
            assert_eq!(t.checksum_cycles(bytes), fast.checksum_cycles(bytes));
        }
        let over: toml::Table = "lines = { l1_size = \"32KiB\", l1_line = \"32B\", l2_line = \"48B\", l2_latency = 10, copy_per_line = 20, checksum_per_line = 35 }".parse().unwrap();
        let e = resolve("hosts[0]", "won-simos-mips", &[("memory", &over)]).unwrap_err();
        assert_eq!(e.path, "hosts[0].memory.lines.l2_line");
    }
}
