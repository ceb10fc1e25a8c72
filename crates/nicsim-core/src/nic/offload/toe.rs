//! The offload (TOE) command path, after Ortiz et al.: the application
//! core writes a command descriptor and rings a doorbell; the
//! communication processor (a second core, or a processor on the NIC)
//! notices it (interrupt, or at the end of a polling turn), decodes it and
//! runs the stack for it; when the stack has changed what the application
//! can do, it posts a completion, which interrupts the application core.
//!
//! ```text
//!  app core: call ─ command ─▶ doorbell ─▶ comm. processor: notice ─ decode ─ stack
//!  app core: ◀─ completion interrupt ◀─ completion posted ◀──────────────────┘
//! ```
//!
//! Where the command, completion and copy costs come from is in
//! `docs/models/offload.md`. Units: picoseconds, cycles, bytes.

use serde::Serialize;

use super::{reserve_memory, CallAction, CallCx, CallEvent, CallOffload, Setup};
use crate::bus::BusOp;
use crate::host::cpu::{Class, Layer, Path};
use crate::host::timing::{OffloadLocation, OffloadNotify, SocketCopy, Timing};

/// Counters of the offload interface.
#[derive(Debug, Clone, Default, Serialize)]
pub struct OffloadStats {
    /// Commands the application core posted (one per socket call).
    pub commands: u64,
    /// Completions the communication processor posted.
    pub completions: u64,
    /// Completion interrupts the application core took.
    pub completion_interrupts: u64,
}

/// The command path of a host with `offload.enabled`.
#[derive(Debug)]
pub struct CommandPath {
    /// The communication processor polls instead of taking interrupts.
    polled: bool,
    /// The socket layer's copy runs on the communication processor
    /// (`offload.socket_copy = "comm"`).
    comm_copy: bool,
    /// A completion is on its way to the application core.
    completion_pending: bool,
    stats: OffloadStats,
}

impl CommandPath {
    /// The path of a host with `offload.enabled`.
    pub fn from_host(host: &Setup) -> Option<CommandPath> {
        let o = &host.timing.offload;
        o.enabled.then(|| CommandPath {
            polled: o.notify == OffloadNotify::Poll,
            comm_copy: o.socket_copy == SocketCopy::Comm,
            completion_pending: false,
            stats: OffloadStats::default(),
        })
    }

    /// When the communication processor notices what appeared at `at`: at
    /// once when interrupted, at the end of its loop's turn when polling.
    fn noticed(&self, timing: &Timing, at: crate::engine::Time) -> crate::engine::Time {
        if self.polled {
            timing.poll_at(at)
        } else {
            at
        }
    }
}

impl CallOffload for CommandPath {
    fn polled(&self) -> bool {
        self.polled
    }

    /// Writing the command descriptor, in every socket call.
    fn call_pieces(&self, timing: &Timing) -> Option<(Layer, u64)> {
        Some((Layer::Command, timing.cycles(timing.offload.command)))
    }

    fn copy_elsewhere(&self) -> bool {
        self.comm_copy
    }

    /// The call's command goes to the communication processor: descriptor
    /// written, doorbell rung.
    fn call_done(&mut self, cx: &mut CallCx) -> bool {
        self.stats.commands += 1;
        let (now, timing) = (cx.now, cx.timing);
        let desc = timing.offload.descriptor.0;
        let seen = match timing.offload.location {
            // Descriptor and doorbell are stores through the north bridge.
            OffloadLocation::Core => reserve_memory(timing, cx.memory_free_at, now, desc),
            // Doorbell is an MMIO write; the NIC processor then fetches the descriptor.
            OffloadLocation::Nic => {
                let rung = cx.bus.transfer(now, BusOp::MmioWrite, 4);
                cx.bus.transfer(rung, BusOp::DeviceRead, desc)
            }
        };
        cx.actions.push(CallAction::At(self.noticed(timing, seen), CallEvent::Noticed));
        true
    }

    /// The stack ran on the communication processor: if the application
    /// waits, post a completion, which interrupts the application core.
    fn stack_done(&mut self, cx: &mut CallCx, core: usize, woken: bool, app_waits: &mut dyn FnMut() -> bool) -> bool {
        if cx.timing.comm_core() != Some(core) {
            return false;
        }
        if cx.app_busy || self.completion_pending || !app_waits() {
            return true;
        }
        self.completion_pending = true;
        let t = cx.timing;
        let core = t.stack_core();
        let pieces = vec![(Layer::Command, t.cycles_on(core, t.offload.completion))];
        let then = CallEvent::CompletionPosted(woken);
        cx.actions.push(CallAction::Job { core, class: Class::Softirq, pieces, path: Path::Receive, then });
        true
    }

    fn on_event(&mut self, cx: &mut CallCx, ev: CallEvent) {
        let t = cx.timing;
        match ev {
            CallEvent::Noticed => {
                let core = t.stack_core();
                let mut pieces = Vec::with_capacity(3);
                if !self.polled {
                    cx.actions.push(CallAction::Interrupt(core));
                    pieces.push((Layer::Interrupt, t.cpu.interrupt_entry));
                    pieces.push((Layer::Interrupt, t.cpu.interrupt_exit));
                }
                pieces.push((Layer::Command, t.cycles_on(core, t.offload.command_rx)));
                let then = CallEvent::Decoded;
                cx.actions.push(CallAction::Job { core, class: Class::Softirq, pieces, path: Path::Send, then });
            }
            CallEvent::Decoded => cx.actions.push(CallAction::PollStack),
            CallEvent::CompletionPosted(woken) => {
                self.stats.completions += 1;
                if t.offload.location == OffloadLocation::Nic {
                    cx.bus.transfer(cx.now, BusOp::DeviceWrite, t.offload.descriptor.0);
                }
                let core = t.cpu.app_core as usize;
                cx.actions.push(CallAction::Interrupt(core));
                self.stats.completion_interrupts += 1;
                let pieces = vec![
                    (Layer::Interrupt, t.cpu.interrupt_entry),
                    (Layer::Command, t.cycles_on(core, t.offload.completion_rx)),
                    (Layer::Interrupt, t.cpu.interrupt_exit),
                ];
                let then = CallEvent::CompletionTaken(woken);
                cx.actions.push(CallAction::Job { core, class: Class::Irq, pieces, path: Path::Receive, then });
            }
            CallEvent::CompletionTaken(woken) => {
                self.completion_pending = false;
                cx.actions.push(CallAction::KickApp(woken));
            }
        }
    }

    fn report(&self) -> Option<OffloadStats> {
        Some(self.stats.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bus::Bus;
    use crate::engine::Time;
    use crate::host::timing::resolve;

    fn ortiz(notify: &str) -> Timing {
        let over: toml::Table = toml::from_str(&format!("enabled = true\nnotify = \"{notify}\"")).unwrap();
        resolve("hosts[0]", "ortiz-p4-400", &[("offload", &over)]).unwrap()
    }

    fn setup(timing: &Timing) -> Setup<'_> {
        Setup { timing, link_mtu: 1500, tcp_header: 20, mac: [2, 0, 0, 0, 0, 1], trusted: false, via: false }
    }

    #[test]
    fn a_call_rings_the_doorbell_and_a_notice_becomes_a_decode_job_on_the_stack_core() {
        for (notify, polled) in [("interrupt", false), ("poll", true)] {
            let t = ortiz(notify);
            let mut path = CommandPath::from_host(&setup(&t)).expect("offload enabled");
            assert_eq!(path.polled(), polled);
            let (mut bus, mut free, mut actions) = (Bus::new(&t.bus), Time(0), Vec::new());
            let mut cx = CallCx {
                now: Time(1_000_000),
                timing: &t,
                bus: &mut bus,
                memory_free_at: &mut free,
                app_busy: true,
                actions: &mut actions,
            };
            assert!(path.call_done(&mut cx), "the engine takes the call to the stack");
            path.on_event(&mut cx, CallEvent::Noticed);
            // The descriptor store reserved the memory system: the notice is due
            // once it is written (at the end of a polling turn when polled).
            let CallAction::At(at, CallEvent::Noticed) = actions[0] else { panic!("{:?}", actions[0]) };
            assert!(at >= free && at > Time(1_000_000));
            let interrupts = actions.iter().filter(|a| matches!(a, CallAction::Interrupt(_))).count();
            assert_eq!(interrupts, usize::from(!polled), "{notify}: an interrupt only when not polling");
            let Some(CallAction::Job { core, class, then, .. }) = actions.last() else { panic!() };
            assert_eq!((*core, *class, *then), (t.stack_core(), Class::Softirq, CallEvent::Decoded));
            assert_eq!(path.report().unwrap().commands, 1);
        }
    }

    #[test]
    fn a_completion_is_posted_only_to_an_application_that_waits() {
        let t = ortiz("poll");
        let mut path = CommandPath::from_host(&setup(&t)).unwrap();
        let (mut bus, mut free, mut actions) = (Bus::new(&t.bus), Time(0), Vec::new());
        let comm = t.comm_core().unwrap();
        let mut cx =
            CallCx { now: Time(0), timing: &t, bus: &mut bus, memory_free_at: &mut free, app_busy: false, actions: &mut actions };
        assert!(!path.stack_done(&mut cx, 0, false, &mut || true), "not the communication processor: the app goes on");
        assert!(path.stack_done(&mut cx, comm, false, &mut || false), "nothing to do: no completion");
        assert!(cx.actions.is_empty());
        assert!(path.stack_done(&mut cx, comm, true, &mut || true));
        assert!(path.stack_done(&mut cx, comm, true, &mut || true), "one completion at a time");
        assert_eq!(cx.actions.len(), 1);
        path.on_event(&mut cx, CallEvent::CompletionPosted(true));
        path.on_event(&mut cx, CallEvent::CompletionTaken(true));
        assert!(matches!(cx.actions.last(), Some(CallAction::KickApp(true))));
        let stats = path.report().unwrap();
        assert_eq!((stats.completions, stats.completion_interrupts), (1, 1));
    }
}
