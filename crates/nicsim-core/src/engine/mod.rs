//! The discrete-event kernel: integer picosecond time, a totally ordered
//! event queue with cancellable entries, seeded per-component RNGs, and the
//! unit parser that turns `"1Gbps"` into engine units once, at the edge.

pub mod rng;
pub mod sched;
pub mod time;
pub mod units;

pub use sched::{EventKey, Priority, Scheduler};
pub use time::{Dur, Time};
