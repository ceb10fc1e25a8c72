//! nicsim's core: a deterministic discrete-event simulator of networked
//! hosts and their NICs, with the real smoltcp TCP/IP stack on every host.
//!
//! Modules import one another one way (`scripts/module_cycles.py` checks
//! it in `make lint` and the tests); `A ← B` means B uses A:
//!
//! ```text
//!  engine ← probe (wire views, pcap) ← bus, link (links, switches)
//!         ← host (CPU, profiles, stack, driver) ← nic (NIC model, offload engines)
//!         ← config (the scenario, validated) ← workload ← node (one host as a
//!           component: its events, its CPU/NIC timing) ← sim (assembly and
//!           execution: builds the system, dispatches events by component) ← api
//! ```
//!
//! One place still goes against the layering the design aims at
//! (components ← assembly ← workloads): a host (`node`) runs its
//! workload's application directly. The crate never depends on Python;
//! `crates/nicsim-py` is the thin binding.

pub mod api;
pub mod bus;
pub mod config;
pub mod engine;
pub mod error;
pub mod host;
pub mod link;
pub mod nic;
pub mod node;
pub mod probe;
pub mod sim;
pub mod workload;

/// Fixtures for the unit tests: the test kit's frame builder, compiled in
/// (the unit tests cannot depend on nicsim-testkit, which depends on this crate).
#[cfg(test)]
#[path = "../../nicsim-testkit/src/frame.rs"]
pub(crate) mod testing;

pub use api::{resolve_toml, run_toml, RunOptions};
pub use error::{ConfigError, Error};

/// The nicsim version recorded with every result.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
