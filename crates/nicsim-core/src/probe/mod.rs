//! Probes: measurement that watches the simulation without changing it.
//!
//! * [`pcap::Trace`] — one pcap per link, nanosecond timestamps;
//!   [`pcap_read::parse`] reads pcap and pcapng files (for replay and `nicsim lro`).
//! * [`wire::TcpMonitor`] — per-flow TCP analysis of frames as they go on
//!   the wire (data segments, retransmissions), like tshark's analysis.
//! * [`observer::Observer`] — user probes on named events (Python callbacks).

pub mod observer;
pub mod pcap;
pub mod pcap_read;
pub mod schedule;
pub mod wire;
