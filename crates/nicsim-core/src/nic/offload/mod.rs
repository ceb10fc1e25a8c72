//! Offload engines: what a NIC (or the driver standing in for one) does to
//! the frames it receives and sends, one file per engine, behind two traits.
//!
//! ```text
//!  wire ─▶ RxOffload::arrive ─▶ NIC FIFO ─▶ RX DMA ─▶ ring ─▶ interrupt
//!       (NIC LRO core, CAM,                          (moderation the engine
//!        control frames)                               may impose)
//!       ─▶ RxOffload::driver_batch (GRO, software LRO, speculation) ─▶ jobs
//!          on the stack core, each delivering a frame to the stack
//!
//!  stack ─▶ TX ring ─▶ TX DMA ─▶ TxOffload::segment ─▶ wire
//!           (the TX engine: TSO cuts super-segments and fills checksums,
//!            checksum offload fills them; then the receive engine's
//!            send-path hooks, if it has them: driver fragmentation)
//! ```
//!
//! An engine sees the world through [`RxCx`]: the time, the host's timing
//! profile, the host's per-frame receive cost, and a list of [`Action`]s it
//! asks for (timers of its own, frames to the host, frames to the wire),
//! which the assembly carries out in order. It never sees the simulator.
//!
//! **Adding an engine**: write `nic/offload/<name>.rs` with a type that
//! implements [`RxOffload`] (or [`TxOffload`]) and a constructor
//! `from_host(&Setup) -> Option<Self>` (which hosts run it), and add one
//! line `<name>::<Type> => <Variant>` to the registry at the end of this
//! file. The registry declares the module and builds the enum dispatcher
//! [`AnyRxOffload`] (or [`AnyTxOffload`]): each host gets the first engine
//! whose constructor accepts it, or [`NoOffload`], the baseline.
//! `docs/models/offload.md` walks through `example.rs`, a lossy receive
//! path used by a test. The engines' own pure parts (the CAM, the merge
//! rules, fragmentation) are in the other files here.

pub mod cam;
pub mod capture;
pub mod frag;
pub mod lro;
pub mod merge;

pub use merge::Coalescer;

use std::collections::VecDeque;

use crate::bus::Bus;
use crate::engine::{Dur, Priority, Time};
use crate::host::cpu::{Class, Job, Layer, Path};
use crate::host::timing::Timing;
pub use crate::host::StackOffloads;

/// Something an engine asks the assembly to do; carried out in order.
#[derive(Debug)]
pub enum Action {
    /// Call the engine's [`RxOffload::on_event`] with this event at this time.
    Timer(Time, Priority, OffloadEvent),
    /// (Re)arm the engine's one re-armable timer: as [`Action::Timer`], and
    /// the event it armed before, if still pending, is cancelled.
    Rearm(Time, Priority, OffloadEvent),
    /// A frame (carrying that many merged TCP segments) joins the NIC's
    /// queue to the receive DMA.
    ToHost(Vec<u8>, u32),
    /// Start the receive DMA if it can.
    KickRx,
    /// Try the transmit path again.
    KickTx,
    /// Put a frame straight on the host's link (a control frame).
    Wire(Vec<u8>),
    /// A frame reaches the NIC as if from the wire (injected interference).
    Arrive(Vec<u8>),
}

/// An engine's own timer or message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OffloadEvent {
    /// The engine's processor finished its frame.
    CoreDone,
    /// The flush timer fired.
    Flush,
    /// Interfering frame number `0` reaches the NIC.
    Interfere(u64),
    /// A control frame's turnaround in the driver is over.
    Control(Vec<u8>),
    /// A throttled transmit path may send again.
    Kick,
    /// A cleanup job is done (not scheduled: a job's continuation).
    Resume,
}

/// What the receive cost model says about one frame on a host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RxCost {
    /// Pieces of the stack's receive work (driver, device, IP, transport).
    pub pieces: Vec<(Layer, u64)>,
    /// IP reassembly rebuilt a datagram by copying: its data is in the cache.
    pub glued: bool,
    /// IP payload bytes of the frame.
    pub ip_payload: u64,
}

/// The host's per-frame receive cost on a core (the assembly's cost model).
pub type RxCostFn<'a> = &'a dyn Fn(&[u8], usize) -> RxCost;

/// What an engine sees and may ask for.
pub struct RxCx<'a> {
    /// The current time.
    pub now: Time,
    /// The host's timing profile.
    pub timing: &'a Timing,
    /// The host's receive cost of a frame on a core.
    pub rx_cost: RxCostFn<'a>,
    /// Frames are still in the NIC (its FIFO, or held on the link).
    pub nic_holding: bool,
    /// What the engine asks for, in order.
    pub actions: &'a mut Vec<Action>,
}

/// How a receive job ends.
#[derive(Debug, PartialEq, Eq)]
pub enum RxDone {
    /// Hand the frame (with that many merged segments) to the stack.
    Deliver(Vec<u8>, u32),
    /// A cleanup is done: the receive DMA may resume.
    Resume,
}

/// One NAPI batch of the driver: frames taken off the receive ring, and the
/// jobs they become on the stack core.
pub struct DriverBatch<'a> {
    /// The stack core.
    pub core: usize,
    /// The message the batch serves (per-message breakdowns).
    pub msg: Option<u64>,
    /// Frames taken off the ring: DMA completion time, frame, merged segments.
    pub frames: Vec<(Time, Vec<u8>, u32)>,
    /// The ring: frames an engine puts back wait for the next batch.
    pub ring: &'a mut VecDeque<(Time, Vec<u8>, u32)>,
    /// Jobs, in order.
    pub jobs: Vec<Job<RxDone>>,
    /// Work for the batch's closing job (frames merged away after the last job).
    pub leftover: Vec<(Layer, u64)>,
    /// The last datagram delivered was rebuilt by a copy.
    pub glued: bool,
}

impl DriverBatch<'_> {
    /// Queue a job delivering `frame` with `pieces` of work.
    pub fn deliver(&mut self, pieces: Vec<(Layer, u64)>, frame: Vec<u8>, segments: u32) {
        let job = Job::new(Class::Softirq, pieces, RxDone::Deliver(frame, segments));
        self.jobs.push(job.for_msg(self.msg).on(Path::Receive));
    }
}

/// What an engine's constructor knows of its host.
#[derive(Debug, Clone, Copy)]
pub struct Setup<'a> {
    /// The host's timing profile.
    pub timing: &'a Timing,
    /// IP MTU of the host's link.
    pub link_mtu: usize,
    /// TCP header bytes of the host's segments (20, or 32 with timestamps).
    pub tcp_header: usize,
    /// The host's MAC address.
    pub mac: [u8; 6],
    /// Frames reach the host's NIC exactly as another stack (or its NIC's
    /// TSO) emitted them, checksums valid: no link damages them, no capture
    /// is replayed, no echo node turns them round. Release builds only, so
    /// that the tests check what this takes for granted.
    pub trusted: bool,
    /// The host's application speaks VIA (user-level messaging).
    pub via: bool,
}

/// Which kind of call the application makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SocketCall {
    /// A TCP read.
    Read,
    /// A TCP write.
    Write,
    /// A VI send (`VipPostSend`).
    ViaSend,
    /// A VI receive (`VipPostRecv`).
    ViaRecv,
    /// Any other call.
    Other,
}

/// A receive offload engine. Every hook has the baseline's behaviour by default.
pub trait RxOffload {
    /// The run starts: the engine may book its first timers (`seed` and
    /// the host's name give it its own random stream).
    fn start(&mut self, _cx: &mut RxCx, _seed: u64, _host: &str) {}

    /// A frame reaches the NIC from the wire: the engine may take it (None)
    /// or let it into the NIC's FIFO.
    fn arrive(&mut self, _cx: &mut RxCx, frame: Vec<u8>) -> Option<Vec<u8>> {
        Some(frame)
    }

    /// The engine's timer or message `ev` is due.
    fn on_event(&mut self, _cx: &mut RxCx, _ev: OffloadEvent) {}

    /// The driver's receive work on a batch: by default each frame climbs
    /// the stack at its own cost.
    fn driver_batch(&mut self, cx: &mut RxCx, batch: &mut DriverBatch) {
        for (_, frame, segments) in std::mem::take(&mut batch.frames) {
            let cost = (cx.rx_cost)(&frame, batch.core);
            batch.glued |= cost.glued;
            batch.deliver(cost.pieces, frame, segments);
        }
    }

    /// Whether the receive DMA must wait (a cleanup is running).
    fn rx_stopped(&self) -> bool {
        false
    }

    /// Whether the engine holds received frames the driver has not passed
    /// up yet (GRO kept across a NAPI poll that used its whole budget): the
    /// driver polls once more before it re-enables interrupts.
    fn holds_frames(&self) -> bool {
        false
    }

    /// Interrupt moderation the engine imposes: frames per interrupt, and
    /// the longest wait after the first (None: the profile's).
    fn moderation(&self) -> Option<(u32, Dur)> {
        None
    }

    /// Whether the queue in front of the receive DMA is the engine's own
    /// memory rather than the NIC's FIFO (it is then not bounded by the FIFO).
    fn owns_rx_queue(&self) -> bool {
        false
    }

    /// The engine's send-path hooks, for an engine on both paths.
    fn tx(&mut self) -> Option<&mut dyn TxOffload> {
        None
    }

    /// Add what the engine counted to a host's report.
    fn report(&self, _into: &mut OffloadReport) {}
}

/// Send-path hooks of an engine (the driver or NIC between the stack and
/// the wire). Every hook has the baseline's behaviour by default.
pub trait TxOffload {
    /// Extra send-path work of a frame on a core.
    fn tx_pieces(&self, _timing: &Timing, _frame: &[u8], _core: usize) -> Option<(Layer, u64)> {
        None
    }

    /// What the host's stack leaves to this engine (asked once, when the
    /// stack is made).
    fn stack(&self) -> StackOffloads {
        StackOffloads::default()
    }

    /// Frames `frame` becomes on the wire (the link must have room for all);
    /// `tso_mss` is the MSS the stack asked the NIC to cut it to, if any.
    fn wire_frames(&self, _frame: &[u8], _tso_mss: Option<u16>) -> usize {
        1
    }

    /// Whether the NIC may start the head frame now (`head`: its bytes).
    fn gate(&mut self, _cx: &mut RxCx, _head: &[u8]) -> bool {
        true
    }

    /// When the DMA of `frame`, started at `now` and done by `done` for the
    /// first descriptor and the data, is really done.
    fn tx_dma(&mut self, _bus: &mut Bus, _descriptor: u64, _now: Time, _frame: &[u8], done: Time) -> Time {
        done
    }

    /// The frames the NIC puts on the wire for `bytes` (cut to `tso_mss`
    /// if the stack asked for it).
    fn segment(&mut self, bytes: Vec<u8>, _tso_mss: Option<u16>) -> Vec<Vec<u8>> {
        vec![bytes]
    }

    /// What a socket call moving `bytes` costs when the engine's OS side
    /// takes part (None: the standard copy).
    fn socket_move(
        &mut self,
        _timing: &Timing,
        _call: SocketCall,
        _bytes: u64,
        _hot: bool,
        _core: usize,
    ) -> Option<specdefrag::SocketMove> {
        None
    }
}

/// An event of a call-path engine, at a time it booked or when a CPU job
/// it asked for is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallEvent {
    /// The communication processor notices a command (doorbell).
    Noticed,
    /// It decoded the command: the stack runs for it.
    Decoded,
    /// It posted a completion (`0`: the application waits for data).
    CompletionPosted(bool),
    /// The application's core took the completion interrupt.
    CompletionTaken(bool),
}

/// What a call-path engine asks the host to do; carried out in order.
#[derive(Debug)]
pub enum CallAction {
    /// Call the engine's [`CallOffload::on_event`] at this time.
    At(Time, CallEvent),
    /// Run `pieces` on core `core` as `class` work of `path`, then call the
    /// engine's [`CallOffload::on_event`] with `then`.
    Job { core: usize, class: Class, pieces: Vec<(Layer, u64)>, path: Path, then: CallEvent },
    /// Core `0` takes an interrupt (counted).
    Interrupt(usize),
    /// Run the stack in the receive stack's context.
    PollStack,
    /// Let the application make its next call (`0`: woken by data).
    KickApp(bool),
}

/// What a call-path engine sees and may ask for.
pub struct CallCx<'a> {
    /// The current time.
    pub now: Time,
    /// The host's timing profile.
    pub timing: &'a Timing,
    /// The host's I/O bus.
    pub bus: &'a mut Bus,
    /// When the host's memory system is next free ([`reserve_memory`]).
    pub memory_free_at: &'a mut Time,
    /// The application is in a call or computing.
    pub app_busy: bool,
    /// What the engine asks for, in order.
    pub actions: &'a mut Vec<CallAction>,
}

/// Reserve a memory system of `timing`'s bandwidth, next free at
/// `free_at`, for `bytes` from `now`; returns when the transfer is done.
pub fn reserve_memory(timing: &Timing, free_at: &mut Time, now: Time, bytes: u64) -> Time {
    let bw = timing.memory.bandwidth.0;
    let ps = match bytes.checked_mul(8) {
        Some(bits) => crate::engine::time::mul_div_ceil(bits, crate::engine::time::PS_PER_S, bw),
        None => (u128::from(bytes) * 8 * u128::from(crate::engine::time::PS_PER_S)).div_ceil(u128::from(bw)) as u64,
    };
    *free_at = (*free_at).max(now) + Dur(ps);
    *free_at
}

/// A call-path engine: how the application's calls reach the protocol
/// stack. The baseline is a system call into the stack on the
/// application's own core; every hook has its behaviour by default.
pub trait CallOffload {
    /// A polling processor serves the NIC and the commands: no interrupts.
    fn polled(&self) -> bool {
        false
    }

    /// The application starts `call` on `core`: the path's own library
    /// work instead of the socket layer (VIA), and the path it is on.
    fn library(&mut self, _cx: &mut CallCx, _call: SocketCall, _core: usize) -> Option<(Vec<(Layer, u64)>, Path)> {
        None
    }

    /// Extra work of a socket call on the application's core.
    fn call_pieces(&self, _timing: &Timing) -> Option<(Layer, u64)> {
        None
    }

    /// The socket layer's copy runs on the communication processor.
    fn copy_elsewhere(&self) -> bool {
        false
    }

    /// A socket call ended: whether the engine takes it to the stack
    /// (otherwise the stack runs at once on the application's core).
    fn call_done(&mut self, _cx: &mut CallCx) -> bool {
        false
    }

    /// The stack ran on `core`: whether the engine tells the application
    /// (otherwise the application is let go on at once). `app_waits` says
    /// whether it has a call to make; ask only when needed.
    fn stack_done(
        &mut self,
        _cx: &mut CallCx,
        _core: usize,
        _woken: bool,
        _app_waits: &mut dyn FnMut() -> bool,
    ) -> bool {
        false
    }

    /// The engine's event `ev` is due.
    fn on_event(&mut self, _cx: &mut CallCx, _ev: CallEvent) {}

    /// What the engine counted, for the host's report.
    fn report(&self) -> Option<toe::OffloadStats> {
        None
    }
}

impl CallOffload for NoOffload {}

/// What the receive engines of a host report (at most one is set).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct OffloadReport {
    /// The NIC's LRO engine and its core (`nic.lro = "nic"`).
    pub lro: Option<nic_lro::NicLroReport>,
    /// GRO or software LRO in the driver (`nic.lro = "gro" | "software"`).
    pub gro: Option<gro::GroStats>,
    /// Zero-copy TCP/IP counters (hosts with a zero-copy switch on).
    pub zero_copy: Option<specdefrag::ZeroCopyStats>,
}

/// The baseline: no offload (on either path).
#[derive(Debug, Default)]
pub struct NoOffload;

impl RxOffload for NoOffload {}
impl TxOffload for NoOffload {}

/// A registry: `module::Engine => Variant`, tried in order; the first whose
/// `from_host(&Setup) -> Option<Self>` accepts a host is its engine.
/// Declares each engine's module and builds the enum dispatcher `$any`
/// over the trait `$engine_trait`, with [`NoOffload`] as its baseline.
macro_rules! registry {
    ($any:ident: $engine_trait:ident; $($(#[$attr:meta])* $module:ident :: $engine:ident => $variant:ident),* $(,)?) => {
        $($(#[$attr])* pub mod $module;)*

        #[doc = concat!("A host's [`", stringify!($engine_trait), "`] engine (enum dispatch over its registry).")]
        #[derive(Debug)]
        pub enum $any {
            /// No engine.
            None(NoOffload),
            $(
                $(#[$attr])*
                #[doc = concat!("[`", stringify!($module), "::", stringify!($engine), "`].")]
                $variant(Box<$module::$engine>),
            )*
        }

        impl $any {
            /// The engine a host runs.
            pub fn for_host(host: &Setup) -> $any {
                $(
                    $(#[$attr])*
                    if let Some(e) = $module::$engine::from_host(host) {
                        return $any::$variant(Box::new(e));
                    }
                )*
                $any::None(NoOffload)
            }

            /// Whether the host runs no engine here (the baseline).
            pub fn is_none(&self) -> bool {
                matches!(self, $any::None(_))
            }

            /// The engine as the trait.
            pub fn engine(&mut self) -> &mut dyn $engine_trait {
                match self {
                    $any::None(e) => e,
                    $($(#[$attr])* $any::$variant(e) => e.as_mut(),)*
                }
            }

            /// The engine as the trait, read-only.
            pub fn engine_ref(&self) -> &dyn $engine_trait {
                match self {
                    $any::None(e) => e,
                    $($(#[$attr])* $any::$variant(e) => e.as_ref(),)*
                }
            }
        }
    };
}

registry! { AnyRxOffload: RxOffload;
    nic_lro::NicEngine => NicLro,
    gro::HostCoalescer => HostCoalescer,
    specdefrag::ZeroCopy => SpecDefrag,
    #[cfg(test)]
    example::DropEvery => Example,
}

registry! { AnyCallOffload: CallOffload;
    via::Doorbell => Via,
    toe::CommandPath => Toe,
}

registry! { AnyTxOffload: TxOffload;
    tso::Segmentation => Tso,
    checksum::TxChecksum => Checksum,
}
