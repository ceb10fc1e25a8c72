//! nicsim's test kit: support code for tests, benches and fuzzing that the
//! simulator itself never runs, kept out of `nicsim-core` so the library
//! ships none of it.
//!
//! * [`fuzz`]: the fuzz target bodies, one function per cargo-fuzz target
//!   in `fuzz/`, replayed over the checked-in corpus by nicsim-core's
//!   integration tests.
//! * [`frame`]: the one builder of Ethernet/IPv4/TCP test frames. nicsim-core's
//!   own unit tests compile the same file as `crate::testing` (they cannot
//!   depend on this crate, which depends on the core).
//!
//! Everything here reaches the simulator through nicsim-core's public API.

pub mod frame;
pub mod fuzz;
