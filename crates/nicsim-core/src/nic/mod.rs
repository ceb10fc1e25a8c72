//! The NIC: what a network interface does to the bytes of a frame (the
//! offload engines in [`offload`], one file each) and the NIC processor of
//! the LRO study ([`risc`]).

pub mod device;
pub mod dim;
pub mod offload;
pub mod risc;

pub use offload::merge::{PassReason, PassReasons};
pub use offload::{cam, capture, frag, gro, lro, tso};

use serde::Serialize;

/// The class a receive-offload engine gives a TCP/IPv4 frame (Elbeshti et
/// al., ISCIT 2012, section on the LRO algorithm): what the NIC core must do
/// with it, and so how many instructions it spends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum LroClass {
    /// Beginning of message: first in-order segment of a stream with no list
    /// yet (new CAM entry, new linked list).
    Bom,
    /// Continuation: in sequence after the stream's list (append a node).
    Com,
    /// End of message: PSH set and a list exists (append, rewrite the head's
    /// headers, hand the merged frame to the host).
    Eom,
    /// Single-segment message: PSH set and no list (moved as is).
    Ssm,
    /// Out of order: not the expected sequence number (sub-list, duplicate
    /// detection and discard).
    Oop,
}

impl LroClass {
    /// Every class, in the study's order.
    pub const ALL: [LroClass; 5] = [LroClass::Bom, LroClass::Com, LroClass::Eom, LroClass::Ssm, LroClass::Oop];

    /// The study's name for the class.
    pub fn name(self) -> &'static str {
        match self {
            LroClass::Bom => "BOM",
            LroClass::Com => "COM",
            LroClass::Eom => "EOM",
            LroClass::Ssm => "SSM",
            LroClass::Oop => "OOP",
        }
    }

    /// Busy instructions the study's RISC core spends on a frame of this
    /// class (Elbeshti et al. 2012, Table I: total minus idle cycles, the
    /// same for every size; OOP has 34 at 1500 and 1024 B and 32 at 512 B,
    /// taken as 34).
    pub fn busy_instructions(self) -> u64 {
        match self {
            LroClass::Bom => 22,
            LroClass::Com => 29,
            LroClass::Eom => 28,
            LroClass::Ssm => 17,
            LroClass::Oop => 34,
        }
    }
}
