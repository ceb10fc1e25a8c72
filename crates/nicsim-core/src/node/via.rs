//! VIA frames reaching a host's application (the Won study's user-level
//! messaging; the frame format and the VI library are in
//! [`crate::workload::via`], the doorbell path of its calls is the call-path
//! engine `nic/offload/via.rs`). On receive, after DMA and the interrupt,
//! the driver and the transport run per frame and the application, polling
//! its receive completion queue, takes the message.

use super::Env;
use crate::engine::Time;
use crate::workload::App;

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
