//! Whole-scenario tests, one binary: ideal hosts (physics of the wire,
//! integrity, determinism, scenario errors) and timed hosts (CPU, memory,
//! bus and NIC models).

mod flows;
mod ideal;
mod netperf;
mod netpipe;
mod replay;
mod timing;
mod udp;
