//! Whole-scenario tests, one binary: ideal hosts (physics of the wire,
//! integrity, determinism, scenario errors) and timed hosts (CPU, memory,
//! bus and NIC models).

mod bad_input;
mod determinism;
mod fuzz_corpus;
mod ideal;
mod impairments;
mod invariants;
mod netpipe;
mod offload;
mod timing;
mod udp;
