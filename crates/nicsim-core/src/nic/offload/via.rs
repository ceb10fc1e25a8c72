//! VIA's doorbell path (the Won study's user-level messaging; the frame
//! format and the VI library are in `workload::via`). `VipPostSend` runs
//! the VI library on the application core (descriptor, send queue,
//! doorbell: an MMIO write over the bus) and traps into the kernel agent,
//! which runs the transport and driver per frame in the same call; the
//! frames then take the NIC's TX ring, DMA and the link like any other.
//! `VipPostRecv` posts a receive descriptor. No socket, no IP, no device
//! layer, no system call.

use super::{CallCx, CallOffload, Setup, SocketCall};
use crate::bus::BusOp;
use crate::host::cpu::{Layer, Path};

/// The VI path of a host whose application speaks VIA.
#[derive(Debug)]
pub struct Doorbell;

impl Doorbell {
    /// The path of a host whose workload speaks VIA.
    pub fn from_host(host: &Setup) -> Option<Doorbell> {
        host.via.then_some(Doorbell)
    }
}

impl CallOffload for Doorbell {
    /// The VI library's work, then the fast trap into the kernel agent
    /// (the doorbell of an Ethernet NIC: the kernel queues the descriptor);
    /// a send rings the doorbell first.
    fn library(&mut self, cx: &mut CallCx, call: SocketCall, core: usize) -> Option<(Vec<(Layer, u64)>, Path)> {
        let c = &cx.timing.costs;
        let (cost, path) = match call {
            SocketCall::ViaSend => {
                cx.bus.transfer(cx.now, BusOp::MmioWrite, 4);
                (c.via_post_send, Path::Send)
            }
            SocketCall::ViaRecv => (c.via_post_recv, Path::Receive),
            SocketCall::Read | SocketCall::Write | SocketCall::Other => return None,
        };
        let pieces = vec![
            (Layer::ViaLibrary, cx.timing.cycles_on(core, cost)),
            (Layer::ViaTransport, cx.timing.cycles_on(core, c.via_trap)),
        ];
        Some((pieces, path))
    }
}
