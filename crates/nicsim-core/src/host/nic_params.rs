//! The NIC's parameters in a timing profile: rings, FIFO, moderation,
//! NAPI, offloads (TSO, checksum, LRO engines), and the zero-copy TCP/IP
//! switches of the Kurmann study. Every number a profile sets carries its
//! source in the profile. Re-exported by [`super::timing`].

use serde::{Deserialize, Serialize};

use super::cpu_params::{one, Cost};
use crate::engine::units::{Bandwidth, Duration, Frequency, Size};

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
    /// Frames the transmit DMA fetches at once: a frame's descriptor and
    /// data reads may start before the frames ahead of it have arrived,
    /// so their read latencies overlap and only the bus serialises their
    /// bytes (a NIC with several outstanding DMA reads). 1: one frame at
    /// a time, each waiting for the one before (two read latencies per
    /// frame).
    #[serde(default = "super::cpu_params::one")]
    pub tx_dma_outstanding: u32,
    /// IP/TCP/UDP checksums computed and checked by the NIC.
    pub checksum_offload: bool,
    /// TCP segmentation offload: the stack hands the NIC segments of up to
    /// 64 KiB, which it cuts to the MSS (needs `checksum_offload`).
    #[serde(default)]
    pub tso: bool,
    /// With TSO, the stack's output gathers a flow's data into super-segments
    /// of whole MSS multiples up to 64 KiB, as Linux's TSO autosizing and
    /// deferral do, holding a short one at most this long (0: off, each
    /// segment smoltcp emits goes to the NIC as it is; no effect without TSO).
    #[serde(default)]
    pub tso_defer: Duration,
    /// Accelerated receive flow steering (Linux aRFS, `ethtool -K ntuple
    /// on` with RFS): the NIC steers a flow's packets to the receive queue
    /// whose interrupt goes to the core where the flow's application last
    /// read, so its interrupts and softirq work run on `cpu.app_core`
    /// instead of `cpu.irq_core`.
    #[serde(default)]
    pub arfs: bool,
    /// Transmit packet steering with a queue per core (Linux XPS as mlx5
    /// sets it up, `mlx5e_alloc_xps_cpumask`: each channel's send queue
    /// for the core of the channel's interrupt): a core
    /// sends on its own channel's queue, and that channel's completion
    /// interrupt goes to the same core, so a frame sent from
    /// `cpu.app_core` while the receive work runs on `cpu.irq_core` is
    /// cleaned on the application's core, after its own interrupt
    /// (`moderation.tx_delay` from the first such completion). Without
    /// it every completion is the receive channel's.
    #[serde(default)]
    pub xps: bool,
    /// Striding receive queue (mlx5 "Striding RQ", its default on a fast PCIe
    /// link since Linux 4.x): received frames are packed into the strides of
    /// large multi-page buffers instead of each taking whole 4 KiB pages, so
    /// the driver allocates (and the reader frees) only the pages the frames
    /// fill, and posts them to the ring (`costs.driver_refill` per page, not
    /// per frame). A frame that fits one page with its headroom (64 B) and
    /// `skb_shared_info` (320 B) takes that size rounded up to a power of two
    /// (2 KiB at MTU 1500); a larger one takes its length in 64-byte strides.
    #[serde(default)]
    pub striding_rq: bool,
    /// Dynamic interrupt moderation on receive (Linux's `net_dim`, as mlx5
    /// runs it by default): `moderation`'s receive packets and delay give
    /// way to DIM's profile, which DIM tunes every 64 interrupts. See
    /// `nic/dim.rs`.
    #[serde(default)]
    pub dim: bool,
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
    /// When GRO or software LRO passes what it holds up the stack.
    #[serde(default)]
    pub gro_flush: GroFlush,
    /// The software queue in front of the transmit ring: `fifo` (first in,
    /// first out) or `fq_codel` (Linux's fair queueing by flow, deficit
    /// round robin of `costs.qdisc_quantum` bytes; CoDel's drops not
    /// modelled). See `host/qdisc.rs`.
    #[serde(default)]
    pub qdisc: QdiscKind,
    /// Byte queue limits (Linux's `dql`, which mlx5, ixgbe and ice report
    /// to): the transmit ring takes packets only while the bytes posted and
    /// not yet completed are within a limit its completions tune, so a
    /// backlog waits in the qdisc instead of the ring.
    #[serde(default)]
    pub bql: bool,
}

/// Which software queue is in front of the transmit ring.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum QdiscKind {
    /// First in, first out.
    #[default]
    Fifo,
    /// fq_codel's fair queueing by flow.
    FqCodel,
}

/// When the driver's coalescer flushes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GroFlush {
    /// At the end of every NAPI batch.
    #[default]
    Batch,
    /// When NAPI completes (Linux 5.4 `napi_complete_done`): a batch that
    /// used its whole budget keeps its merged segments for the next, which
    /// follows at once; a batch short of its budget completes NAPI, so GRO
    /// is flushed and frames that came meanwhile wait for the next
    /// interrupt (`mlx5e_napi_poll`, `ixgbe_poll`).
    NapiComplete,
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
