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

/// The numeric fields of each event of [`EVENTS`], in the order they come.
pub const FIELDS: [&[&str]; 5] =
    [&["link", "direction", "bytes"], &["bytes"], &["core"], &["core", "cycles", "class"], &["op", "bytes"]];

/// One observed event.
#[derive(Debug, Clone, Copy)]
pub struct ProbeEvent<'a> {
    /// Event name (one of [`EVENTS`]).
    pub name: &'static str,
    /// Its index in [`EVENTS`].
    pub kind: usize,
    /// Index of the node concerned (hosts in scenario order, then switches).
    pub node: usize,
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

    /// Emit event number `i` about node `node`, called `host`.
    pub fn emit(&mut self, i: usize, time: Time, node: usize, host: &str, fields: &[(&'static str, f64)]) {
        if let (true, Some(o)) = (self.wanted[i], self.observer.as_mut()) {
            o.on_event(&ProbeEvent { name: EVENTS[i], kind: i, node, time, host, fields });
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

/// Events kept in memory column by column, for reading after the run: the
/// cheap way to look at every frame or job (a push per event, where a
/// callback per event costs a call). Memory grows with the events recorded:
/// about 12 bytes per event plus 8 per field.
#[derive(Debug, Default, Clone)]
pub struct Recording {
    /// Host names, indexed by [`Series::host`].
    pub hosts: Vec<String>,
    /// Index into `hosts` of each node seen (by node index; `u32::MAX`: not yet seen).
    codes: Vec<u32>,
    /// The events of each name of [`EVENTS`] that was asked for.
    pub series: [Option<Series>; EVENTS.len()],
}

/// The recorded events of one name, in simulated-time order.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Series {
    /// Names of the numeric fields, in the order of each row of [`Series::values`].
    pub fields: Vec<&'static str>,
    /// Simulated time of each event, picoseconds.
    pub time_ps: Vec<u64>,
    /// Host of each event, an index into [`Recording::hosts`].
    pub host: Vec<u32>,
    /// Field values, `fields.len()` per event, event after event.
    pub values: Vec<f64>,
}

impl Series {
    /// Events recorded.
    pub fn len(&self) -> usize {
        self.time_ps.len()
    }

    /// Whether none was recorded.
    pub fn is_empty(&self) -> bool {
        self.time_ps.is_empty()
    }

    /// Values of field `name` for every event, if the events have that field.
    pub fn column(&self, name: &str) -> Option<Vec<f64>> {
        let k = self.fields.iter().position(|f| *f == name)?;
        Some(self.values.chunks_exact(self.fields.len()).map(|row| row[k]).collect())
    }
}

impl Recording {
    /// A recording of the events named in `names` (names not in [`EVENTS`]
    /// are ignored; check them first).
    pub fn of<'a>(names: impl IntoIterator<Item = &'a str>) -> Recording {
        let mut r = Recording::default();
        for name in names {
            if let Some(i) = EVENTS.iter().position(|e| *e == name) {
                r.series[i] = Some(Series { fields: FIELDS[i].to_vec(), ..Series::default() });
            }
        }
        r
    }

    /// Whether events called `name` are recorded.
    pub fn wants(&self, name: &str) -> bool {
        EVENTS.iter().position(|e| *e == name).is_some_and(|i| self.series[i].is_some())
    }

    /// Record `event` if its name was asked for.
    pub fn record(&mut self, event: &ProbeEvent<'_>) {
        let Some(series) = self.series.get_mut(event.kind).and_then(Option::as_mut) else { return };
        if event.node >= self.codes.len() {
            self.codes.resize(event.node + 1, u32::MAX);
        }
        let mut host = self.codes[event.node];
        if host == u32::MAX {
            host = self.hosts.len() as u32;
            self.hosts.push(event.host.to_owned());
            self.codes[event.node] = host;
        }
        debug_assert!(series.fields.iter().eq(event.fields.iter().map(|(k, _)| k)), "one field set per event name");
        series.time_ps.push(event.time.ps());
        series.host.push(host);
        series.values.extend(event.fields.iter().map(|(_, v)| *v));
    }
}

/// An [`Observer`] that records events into a shared [`Recording`].
pub struct Recorder(pub std::rc::Rc<std::cell::RefCell<Recording>>);

impl Observer for Recorder {
    fn wants(&self, name: &str) -> bool {
        self.0.borrow().wants(name)
    }

    fn on_event(&mut self, event: &ProbeEvent<'_>) {
        self.0.borrow_mut().record(event);
    }
}
