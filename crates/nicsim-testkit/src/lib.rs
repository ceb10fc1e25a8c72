//! Test support for nicsim, kept out of the library: the bodies of the
//! cargo-fuzz targets ([`fuzz`]; `fuzz/fuzz_targets/*.rs` are one-line
//! wrappers, and the core's corpus replay test runs them on stable) and
//! [`frames`], the one builder of Ethernet/IPv4/TCP test frames.

pub mod frames;
pub mod fuzz;
