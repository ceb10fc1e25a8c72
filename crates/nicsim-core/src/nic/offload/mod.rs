//! Offload engines: what a NIC (or the driver standing in for one) does to
//! the frames it carries. One file per engine.

pub mod cam;
pub mod capture;
pub mod frag;
pub mod gro;
pub mod lro;
pub mod merge;
pub mod tso;
