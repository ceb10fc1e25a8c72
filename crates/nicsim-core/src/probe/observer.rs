//! User probes: named events handed to an [`Observer`] as they happen.
//!
//! The simulation calls the observer with read-only facts; nothing it does
//! can reach back into the run, so results are the same with or without
//! observers (tested). Only the event names the observer asks for are
//! produced, so an unused probe costs one branch.
//!
//! | name | when | host | fields |
//! | --- | --- | --- | --- |
//! | `frame` | a frame starts on the wire | sender | `link`, `direction` (0: endpoint 0 → 1), `bytes` |
//! | `deliver` | a frame reaches a host's stack | receiver | `bytes` |
//! | `interrupt` | a NIC raises an interrupt (timed hosts) | host | `core` |
//! | `job` | a CPU job completes (timed hosts) | host | `core`, `cycles`, `class` (0 irq, 1 softirq, 2 task) |
//! | `call` | an application socket call completes | host | `op` (0 write, 1 read, 2 close), `bytes` |

use crate::engine::Time;

/// Every event name a probe can ask for.
pub const EVENTS: [&str; 5] = ["frame", "deliver", "interrupt", "job", "call"];

/// One observed event.
#[derive(Debug, Clone, Copy)]
pub struct ProbeEvent<'a> {
    /// Event name (one of [`EVENTS`]).
    pub name: &'static str,
    /// Simulated time.
    pub time: Time,
    /// Host concerned.
    pub host: &'a str,
    /// Numeric fields, by name.
    pub fields: &'a [(&'static str, f64)],
}

/// Receives named events during a run.
pub trait Observer {
    /// Whether events called `name` should be produced.
    fn wants(&self, name: &str) -> bool;
    /// One event.
    fn on_event(&mut self, event: &ProbeEvent<'_>);
    /// Whether the run should stop now (for example, a callback failed).
    fn stopped(&self) -> bool {
        false
    }
}

/// The observers of a run, with the names they asked for resolved once.
#[derive(Default)]
pub struct Probes {
    observer: Option<Box<dyn Observer>>,
    wanted: [bool; EVENTS.len()],
    stop: bool,
}

impl Probes {
    /// Probes feeding `observer`.
    pub fn new(observer: Box<dyn Observer>) -> Probes {
        let wanted = EVENTS.map(|n| observer.wants(n));
        Probes { observer: Some(observer), wanted, stop: false }
    }

    /// Whether anybody listens for event number `i` of [`EVENTS`].
    #[inline]
    pub fn wants(&self, i: usize) -> bool {
        self.wanted[i]
    }

    /// Emit event number `i`.
    pub fn emit(&mut self, i: usize, time: Time, host: &str, fields: &[(&'static str, f64)]) {
        if let (true, Some(o)) = (self.wanted[i], self.observer.as_mut()) {
            o.on_event(&ProbeEvent { name: EVENTS[i], time, host, fields });
            self.stop |= o.stopped();
        }
    }

    /// Whether an observer asked to stop the run.
    pub fn stop_requested(&self) -> bool {
        self.stop
    }

    /// Give the observer back.
    pub fn into_observer(self) -> Option<Box<dyn Observer>> {
        self.observer
    }
}

/// Index of `frame` in [`EVENTS`].
pub const FRAME: usize = 0;
/// Index of `deliver`.
pub const DELIVER: usize = 1;
/// Index of `interrupt`.
pub const INTERRUPT: usize = 2;
/// Index of `job`.
pub const JOB: usize = 3;
/// Index of `call`.
pub const CALL: usize = 4;
