//! A machine: the parts of one server that several timed hosts share
//! (`hosts[i].machine`). Each host stands for what is a core's own on a
//! multi-queue server, or a VM's with its own virtual function: its cores,
//! its NIC queue pair (rings, interrupt moderation, NAPI), its stack and
//! sockets. What the machine has once, and lends to whichever of its hosts
//! is handling an event:
//!
//! ```text
//!   host b0 (cores, queue pair, stack) ─┐
//!   host b1 (cores, queue pair, stack) ─┼─▶ machine: I/O bus (one PCIe link),
//!   host b2 (cores, queue pair, stack) ─┘   the L3's DDIO ways
//! ```
//!
//! - **The I/O bus**: every host's descriptor and frame DMA books the same
//!   link, first come, first served, so the hosts together cannot move more
//!   than one PCIe link carries.
//! - **DDIO**: the NIC's writes for every host allocate in the same ways of
//!   the one L3, so a byte's reuse distance counts every byte any host's NIC
//!   wrote after it, not only its own host's.
//!
//! Not shared (not modelled): the memory system's bandwidth. nicsim books
//! each DMA and each copy whole on it, first come, first served; on one
//! host that is part of the calibrated model, but shared, a frame's DMA
//! would wait behind other hosts' whole copies (microseconds for a 64 KiB
//! read), which a memory controller serving cache lines interleaved does
//! not do: four flows into one modern-x86-pcie server fell from 94 to
//! 81 Gb/s that way, their NICs pausing the switch, with the memory 70 %
//! busy. Nor the NIC's on-chip receive buffer and PAUSE (each host's NIC
//! has its own `nic.rx_fifo`), the L3's other contents, kernel-wide locks
//! and allocators. Units: picoseconds, bytes.

use std::collections::VecDeque;

use super::Timed;
use crate::bus::Bus;
use crate::engine::Time;
use crate::host::timing::Timing;

/// One server's shared parts, lent to its hosts one event at a time.
pub(crate) struct Machine {
    /// Its name (`hosts[i].machine`).
    pub(crate) name: String,
    bus: Bus,
    /// Received payload bytes every host's NIC has written into memory.
    llc_in: u64,
}

impl Machine {
    /// The machine of hosts with `timing`'s bus and memory (the scenario
    /// checks that they all have the same).
    pub(crate) fn new(name: &str, timing: &Timing) -> Machine {
        Machine { name: name.into(), bus: Bus::new(&timing.bus), llc_in: 0 }
    }

    /// Lend the machine's parts to host `t`, or take them back: the same
    /// exchange, so a host holds them exactly between two calls.
    pub(crate) fn exchange(&mut self, t: &mut Timed) {
        std::mem::swap(&mut self.bus, &mut t.bus);
        std::mem::swap(&mut self.llc_in, &mut t.llc_in);
    }

    /// What host `t`'s report says of the machine: its name, and its bus's
    /// counters in place of the host's own (which it never used).
    pub(crate) fn report(&self, r: &mut super::TimingReport, until: Time) {
        r.machine = Some(self.name.clone());
        r.bus = self.bus.stats().clone();
        r.bus_utilization = self.bus.utilization(until);
    }
}

/// Where a host's received bytes fall in its machine's stream of DMA
/// writes: for each frame of payload, its first byte's offset in the
/// host's own stream and in the machine's.
#[derive(Debug, Default)]
pub(crate) struct Marks(VecDeque<(u64, u64)>);

impl Marks {
    /// A frame of payload starts at `host` in the host's stream and at
    /// `machine` in the machine's.
    pub(crate) fn push(&mut self, host: u64, machine: u64) {
        self.0.push_back((host, machine));
    }

    /// The machine offset of the host's byte `at` (bytes before it are
    /// read and forgotten); `None` if no frame holds it.
    pub(crate) fn machine_offset(&mut self, at: u64) -> Option<u64> {
        while self.0.len() > 1 && self.0[1].0 <= at {
            self.0.pop_front();
        }
        let &(host, machine) = self.0.front()?;
        (host <= at).then(|| machine + (at - host))
    }
}
