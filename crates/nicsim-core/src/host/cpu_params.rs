//! The CPU side of a timing profile: processor, memory system, per-layer
//! stack costs ([`Cost`]), the application's own computation and protocol
//! offload to a communication processor. Re-exported by [`super::timing`].

use serde::{Deserialize, Serialize};

use crate::engine::units::{Bandwidth, Duration, Frequency, Size};

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

fn default_qdisc_quantum() -> Size {
    // psched_mtu of an Ethernet device at MTU 1500: 1500 + 14.
    Size(1514)
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
    /// Cycles for a cache line to move from one core's private cache to
    /// another's. Paid per socket lock, per `sk_buff` and per packet buffer
    /// the application's core frees after the receive stack's core touched
    /// it (and per lock the softirq takes after the application), when the
    /// two are different cores; 0: not modelled.
    #[serde(default)]
    pub line_transfer: u64,
    /// Private (L2) cache of a core. With `line_transfer`, the cache lines
    /// of received payload the receive stack's core touched (the line the
    /// headers end in, or the head the driver copied) are still in that
    /// core's cache when the application, on another core, reads them
    /// within this cache's reach, and each costs a line transfer; 0: not
    /// modelled.
    #[serde(default)]
    pub l2_cache: Size,
    /// Linux's socket backlog: a TCP segment that arrives while the
    /// application is in a read or write call (which holds the socket lock)
    /// waits in the backlog, and the application's core runs its TCP input
    /// when the call releases the lock (`tcp_add_backlog`, `release_sock`);
    /// other segments get TCP input in the softirq. Off: TCP input is part
    /// of every frame's receive work in the softirq.
    #[serde(default)]
    pub socket_backlog: bool,
    /// With `socket_backlog`: a segment queued behind another of the same
    /// flow that it continues joins it, as Linux 5.0 and later do
    /// (`tcp_add_backlog` → `skb_try_coalesce`): the application's core
    /// then runs TCP input once for the joined segments, and the softirq
    /// frees the joining sk_buff. A join stops at `MAX_SKB_FRAGS` (17) page
    /// fragments, and never takes a GRO aggregate GRO had to chain. Without
    /// `socket_backlog` there is no backlog and this does nothing.
    #[serde(default)]
    pub backlog_coalesce: bool,
    /// With `socket_backlog`, and the application on another core than the
    /// receive stack: the softirq that queues a segment to the backlog
    /// pays a line transfer (`line_transfer`) for the socket's queue line
    /// besides the lock's: `sk_add_backlog` reads `sk_rmem_alloc` and
    /// writes `sk_backlog`, on the line the owner's read writes as it
    /// dequeues and frees (Linux 5.4 `struct sock`, bytes 192 to 255).
    /// Off: only the lock's line moves.
    #[serde(default)]
    pub backlog_queue_line: bool,
    /// A data segment TCP queues in order behind unread data joins the
    /// receive queue's last sk_buff when it has room (Linux 3.5 and later:
    /// `tcp_queue_rcv` → `tcp_try_coalesce` → `skb_try_coalesce`, at most
    /// `MAX_SKB_FRAGS` page fragments, never a chained GRO aggregate). The
    /// core that ran its TCP input frees the joining sk_buff at once; the
    /// read frees one sk_buff for the joined segments.
    #[serde(default)]
    pub receive_queue_coalesce: bool,
    /// With `socket_backlog`: a read that found segments in the backlog
    /// when it released the socket goes on within the same call once its
    /// core has run their TCP input, copying what they queued while the
    /// caller's buffer has room (Linux's `tcp_recvmsg` loop: `release_sock`
    /// then `lock_sock` and another pass over the receive queue, no new
    /// system call). Off: the call ends after the backlog, and the next
    /// read is a new call.
    #[serde(default)]
    pub read_after_backlog: bool,
    /// With `socket_backlog`: a read or write that takes the socket
    /// (`lock_sock`) while the softirq on another core runs a segment's TCP
    /// input spins until that input is done: both hold the socket's
    /// spinlock, the softirq through the whole input (`tcp_v4_rcv`:
    /// `bh_lock_sock_nested` … `tcp_v4_do_rcv` … `bh_unlock_sock`). The
    /// spin is busy time in the lock layer. Off: the call takes the socket
    /// at once.
    #[serde(default)]
    pub lock_spin: bool,
    /// Linux's window test before an immediate ACK (`__tcp_ack_snd_check`):
    /// outside a read, a pure ACK whose window is smaller than the last one
    /// its flow advertised waits (the reader is behind), and the reader
    /// sends it after its copy (`tcp_cleanup_rbuf`), or the delayed-ACK
    /// timer after 40 ms. Off: smoltcp's ACK goes out where it is made.
    #[serde(default)]
    pub ack_window_test: bool,
    /// Time from waking a blocked application to its first instruction
    /// when its core was idle: the idle state's exit (and the wake-up's
    /// signal to that core). The core is not busy meanwhile. A woken
    /// application whose core is running something waits for the core
    /// instead. 0: it runs at once.
    #[serde(default)]
    pub wake_latency: Duration,
    /// Frequency scaling by Linux `intel_pstate` (active mode, the
    /// powersave policy, no hardware P-states): each core's clock follows
    /// its load between `min` and `turbo`, starting at `clock` (within
    /// them). `min = turbo` is the performance policy. Costs given as
    /// rates (copies) are priced in cycles at `clock`. Absent: every core
    /// runs at `clock`.
    #[serde(default)]
    pub pstate: Option<PstateConfig>,
}

/// `cpu.pstate`: the limits and sampling interval of `intel_pstate`.
#[derive(Debug, Clone, Copy, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PstateConfig {
    /// Lowest clock (`cpuinfo_min_freq`).
    pub min: Frequency,
    /// Highest clock, the single-core turbo (`cpuinfo_max_freq`).
    pub turbo: Frequency,
    /// Shortest time between two samples (Linux:
    /// `INTEL_PSTATE_SAMPLING_INTERVAL`, 10 ms).
    #[serde(default = "pstate_interval")]
    pub interval: Duration,
}

/// One P-state step of an Intel core: 100 MHz (`intel_pstate.c`
/// `core_get_scaling`).
pub const PSTATE_STEP_HZ: u64 = 100_000_000;

fn pstate_interval() -> Duration {
    Duration(10 * crate::engine::time::PS_PER_S / 1000)
}

pub(super) fn one() -> u32 {
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
    /// DDIO: the share of the last-level cache the NIC's DMA writes
    /// allocate into (Intel Data Direct I/O). Received data whose reuse
    /// distance (data bytes DMA'd since it arrived) is within it is read
    /// from the cache by the receive copy; 0: DMA goes to memory and every
    /// receive copy is cold.
    #[serde(default)]
    pub ddio: Size,
    /// The LLC ways DDIO allocates into (none or 0: the DDIO share is one
    /// least-recently-used pool, and received data is in the cache exactly
    /// while its reuse distance is within `ddio`). With `w` ways each set of
    /// the LLC holds its `w` most recent DMA lines, and lines fall into sets
    /// as if at random (the LLC hashes physical addresses over its slices
    /// and sets): a byte at reuse distance `d` is still cached with the
    /// probability that fewer than `w` of the `d` bytes after it fell into
    /// its set, `P(Poisson(w d / ddio) < w)` (a set-associative LRU cache's
    /// hit probability at a given stack distance, A. J. Smith, "A
    /// Comparative Study of Set Associative Memory Mapping Algorithms and
    /// Their Use for Cache and Main Memory", IEEE TSE 1978). The expected
    /// bytes cached over all distances is still `ddio`.
    #[serde(default)]
    pub ddio_ways: Option<u32>,
    /// memcpy rate for data the receive copy finds in the last-level cache
    /// through DDIO; none: `cached_copy_bandwidth`.
    #[serde(default)]
    pub llc_copy_bandwidth: Option<Bandwidth>,
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
    /// TCP input of a segment without data (a pure ACK), if priced apart
    /// from `tcp_rx`: Linux's `tcp_ack` (cleaning the retransmission queue,
    /// RTT and rate samples, congestion control) and the output it
    /// releases, against `tcp_rx`'s data path (`tcp_data_queue`, the ACK
    /// decision). Absent: `tcp_rx`.
    #[serde(default)]
    pub tcp_ack_rx: Option<Cost>,
    /// The part of TCP input the softirq runs for every segment before it
    /// checks whether an application call owns the socket (`tcp_v4_rcv`
    /// up to `sock_owned_by_user`: header checks, the socket's lookup, the
    /// socket filter, the control block). Part of `tcp_rx` and
    /// `tcp_ack_rx`: a segment queued to the socket backlog pays it in the
    /// softirq and the rest on the owner's core.
    #[serde(default)]
    pub tcp_rx_demux: Cost,
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
    /// The idle loop choosing an idle state, per idle period of a core (the
    /// governor's `menu_select`, the next timer event). Counted in the
    /// core's cycles, not in its busy time: the OS counts the idle task as
    /// idle, a cycle-sampling profiler sees it.
    #[serde(default)]
    pub idle_select: Cost,
    /// The idle loop entering and leaving the state, per idle period
    /// (`cpuidle_enter_state`, `intel_idle`, the tick); counted like
    /// `idle_select`.
    #[serde(default)]
    pub idle: Cost,
    /// Device layer on send (`dev_queue_xmit`, running the queueing
    /// discipline, locks), per packet.
    #[serde(default)]
    pub device_tx: Cost,
    /// The queueing discipline's own work on a packet sent, per packet: its
    /// enqueue and dequeue (fq_codel, the default of systemd-based
    /// distributions, time-stamps each packet and runs CoDel's control law).
    #[serde(default)]
    pub qdisc: Cost,
    /// One pass of the queueing discipline's deficit round robin: fq_codel
    /// credits the flow at the head of its list one quantum
    /// (`qdisc_quantum`) per pass of its dequeue loop until the flow's
    /// deficit covers the packet, so a packet costs a pass per quantum of
    /// the bytes it counts (`qdisc_pkt_len`: a TSO super-segment counts
    /// every segment's headers); a pure ACK, a fraction of one
    /// (`net/sched/sch_fq_codel.c` `fq_codel_dequeue`, Linux 5.4).
    #[serde(default)]
    pub qdisc_round: Cost,
    /// The queueing discipline's quantum, bytes. fq_codel sets it to
    /// `psched_mtu` of the device when it is created (`fq_codel_init`):
    /// 1 514 for Ethernet at the default MTU, kept when the MTU changes
    /// later.
    #[serde(default = "default_qdisc_quantum")]
    pub qdisc_quantum: Size,
    /// Device layer on receive (protocol demultiplexing), per packet.
    #[serde(default)]
    pub device_rx: Cost,
    /// Driver transmit: descriptor set-up and doorbell, per packet.
    #[serde(default)]
    pub driver_tx: Cost,
    /// Driver receive: descriptor processing, per packet.
    #[serde(default)]
    pub driver_rx: Cost,
    /// A time stamp taken for every frame the driver hands to the stack:
    /// the timekeeping code of the clock read (`ktime_get`: its sequence
    /// count, the conversion to nanoseconds, the indirect call to the clock
    /// source), per received frame (layer `clock`). Stock Linux 5.4 takes
    /// none on this path; the kernel Cai et al. measured with stamps every
    /// skb in `napi_gro_receive` (`gro_tstamp = ktime_get()`, the study's
    /// `kernel_patch/profiling.patch`).
    #[serde(default)]
    pub rx_timestamp: Cost,
    /// The same time stamp's clock source read (`read_tsc`: an `lfence`,
    /// which waits for the loads before it, then `rdtsc`), per received
    /// frame (layer `clock_read`).
    #[serde(default)]
    pub rx_timestamp_read: Cost,
    /// The indirect call a read makes to its copy routine for each piece of
    /// an sk_buff it copies: its head's payload and each page fragment
    /// (Linux 5.4 `__skb_datagram_iter` calls `cb`, `simple_copy_to_iter`,
    /// through a pointer, which a kernel built with retpolines turns into a
    /// thunk whose return is predicted wrong on purpose; Linux 5.7 calls it
    /// directly, `INDIRECT_CALL_1`). Per piece, on the reader's core: the
    /// part `copy_call_thunk` in layer `indirect`, the rest in `copy`.
    #[serde(default)]
    pub copy_call: Cost,
    /// The part of `copy_call` a profile by function samples on the thunk
    /// (`__x86_indirect_thunk_*`; layer `indirect`), at most all of it. The
    /// return predicted wrong stalls until the call's target retires, so a
    /// precise cycles sample lands much of the stall on the copy routine's
    /// first instructions instead (layer `copy`).
    #[serde(default)]
    pub copy_call_thunk: Cost,
    /// Driver reclaiming a sent packet's descriptor, per packet.
    #[serde(default)]
    pub driver_tx_clean: Cost,
    /// Driver posting a fresh receive buffer, per buffer: per frame taken,
    /// or per page with `nic.striding_rq` (a multi-packet WQE's pages).
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
    /// An `sk_buff` head allocated: per received frame (the driver builds
    /// one per buffer); per sk_buff a TCP write fills, on the writer's core
    /// (`tcp_sendmsg`: one per MSS, or with GSO per 64 KiB size goal; the
    /// data segments sent from them later allocate none); per ACK, control
    /// segment or datagram sent (layer `skb`).
    #[serde(default)]
    pub skb_alloc: Cost,
    /// An `sk_buff` freed: per received segment the application consumed
    /// (at its read), per frame GRO merged into another, per ACK consumed in
    /// the softirq, per sent frame reclaimed (layer `skb`).
    #[serde(default)]
    pub skb_free: Cost,
    /// The slab allocator's part of an `sk_buff`: one `kmem_cache_alloc`
    /// at every `skb_alloc` and one `kmem_cache_free` at every `skb_free`
    /// (layer `mm`, where a profile by function puts the slab allocator;
    /// `skb_alloc` and `skb_free` are then the rest of building and
    /// releasing the buffer).
    #[serde(default)]
    pub skb_slab: Cost,
    /// Packet memory allocated: per 4 KiB receive buffer page the driver
    /// posts (a jumbo frame fills several) (layer `mm`).
    #[serde(default)]
    pub page_alloc: Cost,
    /// Send buffer memory: per 32 KiB page fragment a send call fills
    /// (`sk_page_frag_refill`), its allocation and its later free (layer
    /// `mm`). Linux 5.4 serves only order-0 pages from the per-CPU lists;
    /// this order-3 compound page comes from the buddy allocator under the
    /// zone lock (mm/page_alloc.c `rmqueue`), so it is priced apart from
    /// the receive ring's order-0 pages.
    #[serde(default)]
    pub page_frag: Cost,
    /// `skb_split`'s own work, per TSO split at transmit (layer `skb`):
    /// a super-segment that ends inside an sk_buff moves the fragment
    /// descriptors past its end to the new sk_buff and, for the fragment
    /// the end falls in, takes a second reference on its page
    /// (`skb_split_no_header`: `skb_frag_ref`, one atomic increment). The
    /// new sk_buff's allocation is priced apart (`skb_alloc`, `skb_slab`).
    #[serde(default)]
    pub skb_split: Cost,
    /// The buddy allocator's zone lock, per send fragment allocated and per
    /// one freed (`page_frag`; layer `lock`): Linux 5.4 takes it in
    /// `rmqueue` (`spin_lock_irqsave(&zone->lock)`) for the order-3
    /// allocation and in `free_one_page` (`spin_lock`) for the free, each
    /// an out-of-line `_raw_spin_lock*` call, which a profile by function
    /// counts apart from the allocator's own code. When another core took
    /// the lock last its line moves over (`cpu.line_transfer`).
    #[serde(default)]
    pub zone_lock: Cost,
    /// Packet memory freed: per 4 KiB page of a received frame, with its
    /// segment; per sent frame reclaimed (layer `mm`).
    #[serde(default)]
    pub page_free: Cost,
    /// The socket lock, taken and released: per socket call, per segment
    /// TCP receives in the softirq (layer `lock`).
    #[serde(default)]
    pub sock_lock: Cost,
    /// TCP input's extra work per segment when the application runs on
    /// another core than the receive stack: the socket's state (sequence
    /// numbers, window, queues) was last written by the other core and its
    /// cache lines move over (layer `tcp`; not paid under aRFS, nor by
    /// input from the socket backlog, which runs on the application's
    /// core).
    #[serde(default)]
    pub tcp_rx_remote: Cost,
    /// The same extra for a segment without data (a pure ACK), if priced
    /// apart, as its input is (`tcp_ack_rx`): `tcp_ack` reads and writes the
    /// sending half of the socket (the retransmission queue, the send
    /// window, congestion state), a data segment's input its receiving half
    /// (the receive queue, the ACK decision). Absent: `tcp_rx_remote`.
    #[serde(default)]
    pub tcp_ack_rx_remote: Option<Cost>,
    /// The scheduler switching to an application that blocked (empty
    /// receive queue, full send buffer), per wake-up (layer `sched`).
    #[serde(default)]
    pub schedule: Cost,
}
