//! The echo workload on the simulator: the echo node and the per-message
//! measurement of the Won study (VIA's datapath on a host is in
//! [`crate::node`]).
//!
//! ```text
//!  client (timed)  ── frames ──▶  echo node: swap MAC (and IP, UDP port) addresses,
//!                  ◀── frames ──  return each frame after `delay`
//! ```
//!
//! **Echo node.** An ideal host that returns every IPv4 or VIA frame with
//! source and destination swapped (Ethernet; IPv4 addresses; UDP ports in a
//! datagram's first fragment). Swapping leaves every checksum valid (a
//! ones'-complement sum does not depend on the order of its terms). Other
//! frames (ARP) go to its stack, which answers them.
//!
//! **Measurement.** Per message and path: the cycles of every job tagged
//! with it, by layer (see [`crate::node`]), plus DMA: the duration of each
//! of its frames' DMA in CPU cycles. Send: from the call until the driver
//! has reclaimed the last frame after the NIC sent it (the send completion;
//! the transmit interrupt belongs to the send path). Receive: from the first
//! frame's arrival at the NIC until the receive call returns. Besides the
//! cycles, the elapsed cycles of each span are kept: where nothing overlaps
//! (one frame) they equal the sum of the layers.

use std::collections::BTreeMap;

use indexmap::IndexMap;
use serde::Serialize;

use super::{Event, Port, Sim};
use crate::config::{EchoConfig, MessageProtocol};
use crate::engine::{Priority, Time};
use crate::host::cpu::{Breakdown, Layer, Path, LAYERS};
use crate::workload::{via, App};

/// Whether `frame` is one the echo node returns (IPv4 or VIA).
fn echoed(frame: &[u8]) -> bool {
    use smoltcp::wire::{EthernetFrame, EthernetProtocol};
    EthernetFrame::new_checked(frame).is_ok_and(|e| e.ethertype() == EthernetProtocol::Ipv4) || via::is_via(frame)
}

impl Sim {
    /// Frame `frame` reached host `h`: if `h` is the echo node and the frame
    /// is IPv4 or VIA, return it after the echo delay. Returns the frame if
    /// it is not for the echo.
    pub(super) fn echo_arrive(&mut self, h: usize, mut frame: Vec<u8>, now: Time) -> Option<Vec<u8>> {
        match self.echo {
            Some((node, delay)) if node == h && echoed(&frame) => {
                crate::probe::wire::swap_headers(&mut frame);
                self.sched.at(now + delay, Priority::WIRE, Event::Echo(h, frame));
                None
            }
            _ => Some(frame),
        }
    }

    /// The echo node puts a returned frame on its link.
    pub(super) fn on_echo(&mut self, h: usize, frame: Vec<u8>, now: Time) -> Result<(), crate::Error> {
        let Port { link: l, end: d } = self.ports[h];
        self.links[l].chans[d].enqueue(frame);
        super::start_wire(&mut self.sched, &mut self.links, &mut self.probes, &self.names, l, d, now)
    }

    /// The echo workload's measurement on its client (None: not an echo run).
    pub fn echo_report(&self, cfg: &EchoConfig) -> Option<EchoReport> {
        let h = self.hosts.iter().position(|x| x.name == cfg.client)?;
        let App::Echo(client) = &self.apps[h] else { return None };
        let t = self.timed[h].as_ref();
        let hz = t.map(|t| t.timing.cpu.clock.0).unwrap_or(0);
        let proto = cfg.protocol;
        let mut rows = Vec::new();
        for msg in client.warmup..client.completed {
            let side = |path: Path| -> MessageSide {
                let mut b: Breakdown = t.and_then(|t| t.per_msg.get(&(msg, path)).copied()).unwrap_or([0; LAYERS]);
                let m = t.map(|t| &t.measure);
                b[Layer::Dma.index()] += m.and_then(|m| m.dma.get(&(msg, path)).copied()).unwrap_or(0);
                let elapsed = m.and_then(|m| m.spans.get(&(msg, path))).map_or(0, |(a, z)| {
                    (u128::from(z.since(*a).ps()) * u128::from(hz) / u128::from(crate::engine::time::PS_PER_S)) as u64
                });
                let mut grouped = study(proto, path, &b);
                if path == Path::Send {
                    // Transmit completions run in the interrupt handler: Intr's.
                    let clean = m.and_then(|m| m.tx_clean.get(&msg).copied()).unwrap_or(0);
                    let clean = clean.min(grouped.get("dev_drv").copied().unwrap_or(0));
                    if clean > 0 {
                        *grouped.entry("dev_drv").or_default() -= clean;
                        *grouped.entry("intr").or_default() += clean;
                    }
                }
                MessageSide {
                    total: b.iter().sum(),
                    elapsed,
                    frames: m.and_then(|m| m.frames.get(&(msg, path)).copied()).unwrap_or(0),
                    cycles: named(&b),
                    study: grouped,
                }
            };
            rows.push(MessageRow { msg, send: side(Path::Send), receive: side(Path::Receive) });
        }
        let mean = |pick: fn(&MessageRow) -> &MessageSide| -> PathMean {
            let n = rows.len().max(1) as f64;
            let mut cycles: BTreeMap<&'static str, f64> = BTreeMap::new();
            let mut groups: IndexMap<&'static str, f64> = IndexMap::new();
            for r in &rows {
                let s = pick(r);
                for (k, v) in &s.cycles {
                    *cycles.entry(k).or_default() += *v as f64 / n;
                }
                for (k, v) in &s.study {
                    *groups.entry(k).or_default() += *v as f64 / n;
                }
            }
            PathMean {
                total: rows.iter().map(|r| pick(r).total as f64).sum::<f64>() / n,
                elapsed: rows.iter().map(|r| pick(r).elapsed as f64).sum::<f64>() / n,
                frames: rows.iter().map(|r| pick(r).frames as f64).sum::<f64>() / n,
                cycles,
                study: groups,
            }
        };
        Some(EchoReport {
            protocol: match proto {
                MessageProtocol::Udp => "udp",
                MessageProtocol::Via => "via",
            },
            size: cfg.size.0,
            measured: rows.len() as u64,
            clock_hz: hz,
            send: mean(|r| &r.send),
            receive: mean(|r| &r.receive),
            messages: rows,
        })
    }
}

fn named(b: &Breakdown) -> BTreeMap<&'static str, u64> {
    Layer::ALL.iter().filter(|l| b[l.index()] > 0).map(|l| (l.name(), b[l.index()])).collect()
}

/// The study's layers, in its order, per protocol.
pub const UDP_LAYERS: [&str; 7] = ["socket", "udp", "ip", "dev", "dev_drv", "intr", "dma"];
/// M-VIA's layers in the study.
pub const VIA_LAYERS: [&str; 5] = ["vi_library", "transport", "dev_drv", "intr", "dma"];

/// The study's layer that nicsim layer `layer` belongs to on `path`. UDP:
/// the send copy (and its checksum) is IP's (Linux 2.3 copies in
/// `ip_build_xmit`), the receive copy is UDP's (`udp_recvmsg`); system call
/// and wake-up are the socket's. VIA: the receive copy is the transport's.
/// Driver work on the receive path runs in the interrupt handler (Linux 2.3
/// has no NAPI: the driver's receive routine is called from its interrupt
/// handler), so it is Intr's: "a receive operation is interrupt initiated
/// and thus handled only by Intr and Dev" (UDP), "receive operations are
/// completely handled by Intr" (M-VIA). On the send path the driver is Dev
/// Drv, except the transmit completions, which the report moves to Intr.
pub fn study_layer(proto: MessageProtocol, path: Path, layer: Layer) -> &'static str {
    use Layer::*;
    match (proto, layer) {
        (_, Interrupt) => "intr",
        (_, Driver) if path == Path::Receive => "intr",
        (_, Driver) => "dev_drv",
        (_, Dma) => "dma",
        (MessageProtocol::Udp, Syscall | Socket) => "socket",
        (MessageProtocol::Udp, Udp) => "udp",
        (MessageProtocol::Udp, Ip | IpFrag) => "ip",
        (MessageProtocol::Udp, Device) => "dev",
        (MessageProtocol::Udp, Copy | Checksum | MemoryStall) => match path {
            Path::Send => "ip",
            _ => "udp",
        },
        (MessageProtocol::Via, ViaLibrary) => "vi_library",
        (MessageProtocol::Via, ViaTransport | Copy | MemoryStall) => "transport",
        _ => "other",
    }
}

/// `b` grouped into the study's layers, in its order (plus `other` if any
/// cycle fits none, which the tests rule out).
fn study(proto: MessageProtocol, path: Path, b: &Breakdown) -> IndexMap<&'static str, u64> {
    let order: &[&str] = match proto {
        MessageProtocol::Udp => &UDP_LAYERS,
        MessageProtocol::Via => &VIA_LAYERS,
    };
    let mut out: IndexMap<&'static str, u64> = order.iter().map(|k| (*k, 0)).collect();
    for l in Layer::ALL {
        if b[l.index()] > 0 {
            *out.entry(study_layer(proto, path, l)).or_default() += b[l.index()];
        }
    }
    out
}

/// One side (send or receive) of one message.
#[derive(Debug, Clone, Serialize)]
pub struct MessageSide {
    /// Cycles, all layers (CPU and DMA).
    pub total: u64,
    /// Cycles from the span's first to its last activity.
    pub elapsed: u64,
    /// Frames DMA'd.
    pub frames: u64,
    /// Cycles per nicsim layer.
    pub cycles: BTreeMap<&'static str, u64>,
    /// Cycles per study layer, in the study's order.
    pub study: IndexMap<&'static str, u64>,
}

/// One measured message.
#[derive(Debug, Clone, Serialize)]
pub struct MessageRow {
    /// Message number (warm-up messages come first and are left out).
    pub msg: u64,
    /// Its send.
    pub send: MessageSide,
    /// Its receive (of the echo).
    pub receive: MessageSide,
}

/// Means over the measured messages of one side.
#[derive(Debug, Clone, Serialize)]
pub struct PathMean {
    /// Mean cycles.
    pub total: f64,
    /// Mean elapsed cycles.
    pub elapsed: f64,
    /// Mean frames.
    pub frames: f64,
    /// Mean cycles per nicsim layer.
    pub cycles: BTreeMap<&'static str, f64>,
    /// Mean cycles per study layer.
    pub study: IndexMap<&'static str, f64>,
}

/// The echo workload's measurement on the client.
#[derive(Debug, Clone, Serialize)]
pub struct EchoReport {
    /// `udp` or `via`.
    pub protocol: &'static str,
    /// Message size, bytes.
    pub size: u64,
    /// Messages measured (warm-up left out).
    pub measured: u64,
    /// The client's clock (0: an ideal host, no cycles).
    pub clock_hz: u64,
    /// Send side, means.
    pub send: PathMean,
    /// Receive side, means.
    pub receive: PathMean,
    /// Every measured message.
    pub messages: Vec<MessageRow>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::cpu::Layer;

    #[test]
    fn every_layer_of_either_path_has_a_study_layer() {
        for l in [
            Layer::Syscall,
            Layer::Socket,
            Layer::Copy,
            Layer::Checksum,
            Layer::Udp,
            Layer::Ip,
            Layer::IpFrag,
            Layer::Device,
            Layer::Driver,
            Layer::Interrupt,
            Layer::Dma,
        ] {
            for p in [Path::Send, Path::Receive] {
                assert_ne!(study_layer(MessageProtocol::Udp, p, l), "other", "{l:?}");
            }
        }
        assert_eq!(study_layer(MessageProtocol::Udp, Path::Send, Layer::Copy), "ip");
        assert_eq!(study_layer(MessageProtocol::Udp, Path::Receive, Layer::Copy), "udp");
        assert_eq!(study_layer(MessageProtocol::Via, Path::Receive, Layer::Copy), "transport");
        assert_eq!(study_layer(MessageProtocol::Via, Path::Send, Layer::Device), "other");
        assert_eq!(study_layer(MessageProtocol::Via, Path::Receive, Layer::Driver), "intr");
        assert_eq!(study_layer(MessageProtocol::Udp, Path::Send, Layer::Driver), "dev_drv");
    }
}
