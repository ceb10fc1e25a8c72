//! VIA's datapath on a host (the Won study's user-level messaging; the
//! frame format and the VI library are in [`crate::workload::via`]).
//! `VipPostSend` runs the VI library on the application core (descriptor,
//! send queue, doorbell: an MMIO write over the bus), then the transport and
//! driver per frame in the same call; the frames then take the NIC's TX
//! ring, DMA and the link like any other. On receive, after DMA and the
//! interrupt, the driver and the transport run per frame and the
//! application, polling its receive completion queue, takes the message. No
//! socket, no IP, no device layer, no system call.

use super::timed::{Next, Timed};
use super::Env;
use crate::bus::BusOp;
use crate::engine::Time;
use crate::host::cpu::{Class, Job, Layer, Path};
use crate::workload::{App, Op};

impl Env<'_> {
    /// A VIA frame reached the host's application (after the receive path
    /// on a timed host). Frames for a host without a VI are dropped, as a
    /// NIC drops an unknown EtherType.
    pub(super) fn via_deliver(&mut self, frame: &[u8], now: Time) -> Result<(), crate::Error> {
        if let App::Echo(e) = &mut *self.app {
            e.deliver(frame).map_err(|e| crate::Error::Simulation(format!("host {} at {now}: {e}", self.host.name)))?;
        }
        Ok(())
    }
}

impl Timed {
    /// A VIA call: the VI library on the application core; `VipPostSend`
    /// rings the doorbell (an MMIO write) when it is done.
    pub(super) fn via_call(&mut self, env: &mut Env, op: Op, now: Time) {
        let msg = env.app.current_msg();
        let t = &mut *self;
        t.app_busy = true;
        let core = t.timing.cpu.app_core as usize;
        let c = &t.timing.costs;
        let (cost, path) = match op {
            Op::ViaSend { .. } => {
                t.bus.transfer(now, BusOp::MmioWrite, 4);
                (c.via_post_send, Path::Send)
            }
            _ => (c.via_post_recv, Path::Receive),
        };
        // The library's work, then the fast trap into the kernel agent (the
        // doorbell of an Ethernet NIC: the kernel queues the descriptor).
        let pieces = vec![
            (Layer::ViaLibrary, t.timing.cycles_on(core, cost)),
            (Layer::ViaTransport, t.timing.cycles_on(core, c.via_trap)),
        ];
        let job = Job::new(Class::Task, pieces, Next::AppOp(op)).for_msg(msg).on(path);
        self.submit(env, core, now, job);
    }
}
