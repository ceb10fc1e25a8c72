//! Whole-scenario tests, one binary: ideal hosts (physics of the wire,
//! integrity, determinism, scenario errors) and timed hosts (CPU, memory,
//! bus and NIC models).

mod bad_input;
mod coalesce;
mod compute;
mod determinism;
mod dolly;
mod dsm;
mod flows;
mod fuzz_corpus;
mod ideal;
mod impairments;
mod invariants;
mod kurmann;
mod lro;
mod machine;
mod modern;
mod netperf;
mod netpipe;
mod offload;
mod replay;
mod risc;
mod switch;
mod timing;
mod udp;
mod won;
