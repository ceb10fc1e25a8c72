//! Whole-scenario tests, one binary: ideal hosts (physics of the wire,
//! integrity, determinism, scenario errors) and timed hosts (CPU, memory,
//! bus and NIC models).

mod ideal;
mod netpipe;
mod offload;
mod timing;
mod udp;
