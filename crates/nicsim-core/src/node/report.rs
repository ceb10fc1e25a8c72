//! What the timing model measured on one host: cores, layers, NIC, bus,
//! offload engines, and per-message breakdowns. Units: seconds, cycles.

use std::collections::BTreeMap;

use serde::Serialize;

use super::timed::Timed;
use crate::engine::Time;
use crate::host::cpu::{Breakdown, Layer, Path, LAYERS};
use crate::nic::device::NicStats;
use crate::nic::offload::nic_lro::NicLroReport;
use crate::nic::offload::toe::OffloadStats;
use crate::nic::offload::OffloadReport;

/// One core's share of a run.
#[derive(Debug, Clone, Serialize)]
pub struct CoreReport {
    /// Core index.
    pub core: usize,
    /// Busy fraction of the run (until its last event).
    pub utilization: f64,
    /// Seconds spent running jobs.
    pub busy_s: f64,
    /// Hard interrupts taken.
    pub interrupts: u64,
    /// Interrupts per simulated second.
    pub interrupts_per_s: f64,
    /// Idle periods that ended (a job came to the core after it had been
    /// idle for some time).
    pub idle_periods: u64,
    /// Mean clock while busy, Hz (the fixed clock, or what `cpu.pstate`
    /// chose; 0 if the core never ran).
    pub busy_clock_hz: f64,
    /// Cycles per layer (layers with none are left out).
    pub cycles: BTreeMap<&'static str, u64>,
    /// Busy fraction per `run.sample_interval` bin.
    pub utilization_series: Vec<f64>,
}

/// Per-layer cycles of the average message (request/response transaction).
#[derive(Debug, Clone, Serialize)]
pub struct MessageReport {
    /// Messages seen.
    pub count: u64,
    /// Mean cycles per layer per message, all paths.
    pub mean_cycles: BTreeMap<&'static str, f64>,
    /// Mean cycles per layer per message on the send path.
    pub mean_send: BTreeMap<&'static str, f64>,
    /// Mean cycles per layer per message on the receive path.
    pub mean_receive: BTreeMap<&'static str, f64>,
    /// Mean total cycles per message.
    pub mean_total: f64,
}

/// Everything the timing model measured on one host.
#[derive(Debug, Clone, Serialize)]
pub struct TimingReport {
    /// The profile's description.
    pub profile: String,
    /// Mean busy fraction over all cores.
    pub cpu_utilization: f64,
    /// When the measured interval began, s: the cores' counters and the
    /// cycles by layer and by path count from here (0 unless the workload
    /// leaves out a warm-up, `omit`); the NIC, bus and other counters
    /// count from the start.
    pub measured_from_s: f64,
    /// Cycles per layer, all cores.
    pub cycles: BTreeMap<&'static str, u64>,
    /// Cycles per layer of completed send-path jobs.
    pub cycles_send: BTreeMap<&'static str, u64>,
    /// Cycles per layer of completed receive-path jobs.
    pub cycles_receive: BTreeMap<&'static str, u64>,
    /// Per core.
    pub cores: Vec<CoreReport>,
    /// NIC counters.
    pub nic: NicStats,
    /// Bus counters.
    pub bus: crate::bus::BusStats,
    /// Busy fraction of the bus (its busiest resource).
    pub bus_utilization: f64,
    /// The machine whose bus, memory and DDIO ways this host shares
    /// (`hosts[i].machine`); then `bus` and `bus_utilization` are the
    /// machine's, the same for each of its hosts.
    pub machine: Option<String>,
    /// Per-message breakdown (request/response only).
    pub messages: Option<MessageReport>,
    /// Offload interface counters (offload mode only).
    pub offload: Option<OffloadStats>,
    /// The NIC's LRO engine and its core (`nic.lro = "nic"` only).
    pub lro: Option<NicLroReport>,
    /// GRO or software LRO in the driver (`nic.lro = "gro" | "software"` only).
    pub gro: Option<crate::nic::gro::GroStats>,
    /// Zero-copy TCP/IP counters (hosts with a zero-copy switch on only).
    pub zero_copy: Option<crate::nic::offload::specdefrag::ZeroCopyStats>,
    /// ACKs the window test held (`cpu.ack_window_test` on only).
    pub delayed_acks: Option<super::ackgate::AckStats>,
    /// The socket lock and its backlog (`cpu.socket_backlog` on only).
    pub socket_lock: Option<super::socklock::SocketLockStats>,
    /// Where reads found the received data they copied, and how much
    /// waited for a read (`memory.ddio` set only; the measured interval).
    pub rx_copy: Option<super::rxcopy::RxCopyStats>,
    /// The data sk_buffs a TCP sender allocated, sent and freed (hosts
    /// that sent TCP data only; the whole run).
    pub send_skbs: Option<super::rtx::SendSkbStats>,
}

fn named(b: &Breakdown) -> BTreeMap<&'static str, u64> {
    Layer::ALL.iter().filter(|l| b[l.index()] > 0).map(|l| (l.name(), b[l.index()])).collect()
}

impl Timed {
    /// The measured interval begins at `now` (the workload's warm-up is
    /// over): the cores' counters and the cycles by path start again.
    pub fn begin_measurement(&mut self, now: Time) {
        for c in &mut self.cores {
            c.restart_counters(now);
        }
        self.per_path = [[0; LAYERS]; 3];
        self.measured_from = now;
        self.rx_copy.restart(now);
    }

    /// The timing report over a run that lasted until `until`. The cores'
    /// counters and the cycles by path cover the measured interval (from
    /// `measured_from_s`); the other counters cover the whole run.
    pub fn report(&self, until: Time) -> TimingReport {
        let t = self;
        let span = until.since(t.measured_from.min(until));
        let secs = span.as_secs_f64().max(1e-18);
        let bin = t.cores.first().map_or(0, |c| c.bin_ps());
        let mut total: Breakdown = [0; LAYERS];
        let cores: Vec<CoreReport> = t
            .cores
            .iter()
            .enumerate()
            .map(|(i, c)| {
                for (sum, v) in total.iter_mut().zip(c.stats.cycles) {
                    *sum += v;
                }
                CoreReport {
                    core: i,
                    utilization: c.stats.busy_ps as f64 / span.0.max(1) as f64,
                    busy_s: c.stats.busy_ps as f64 / 1e12,
                    interrupts: c.stats.interrupts,
                    interrupts_per_s: c.stats.interrupts as f64 / secs,
                    idle_periods: c.stats.idle_periods,
                    busy_clock_hz: if c.stats.busy_ps > 0 {
                        c.stats.busy_cycles as f64 * 1e12 / c.stats.busy_ps as f64
                    } else {
                        0.0
                    },
                    cycles: named(&c.stats.cycles),
                    utilization_series: c.series.iter().map(|&b| b as f64 / bin.max(1) as f64).collect(),
                }
            })
            .collect();
        let messages = (!t.per_msg.is_empty()).then(|| {
            let count = t.per_msg.keys().map(|(m, _)| m).collect::<std::collections::BTreeSet<_>>().len();
            let mean = |path: Option<Path>| -> BTreeMap<&'static str, f64> {
                let mut sum: Breakdown = [0; LAYERS];
                for (_, row) in t.per_msg.iter().filter(|((_, p), _)| path.is_none_or(|want| *p == want)) {
                    for (s, v) in sum.iter_mut().zip(row) {
                        *s += v;
                    }
                }
                Layer::ALL
                    .iter()
                    .filter(|l| sum[l.index()] > 0)
                    .map(|l| (l.name(), sum[l.index()] as f64 / count as f64))
                    .collect()
            };
            let all = mean(None);
            MessageReport {
                count: count as u64,
                mean_total: all.values().sum(),
                mean_cycles: all,
                mean_send: mean(Some(Path::Send)),
                mean_receive: mean(Some(Path::Receive)),
            }
        });
        let mut offload = OffloadReport::default();
        t.rx.engine_ref().report(&mut offload);
        TimingReport {
            profile: t.timing.description.clone(),
            cpu_utilization: cores.iter().map(|c| c.utilization).sum::<f64>() / cores.len() as f64,
            measured_from_s: t.measured_from.as_secs_f64(),
            cycles: named(&total),
            cycles_send: named(&t.per_path[Path::Send as usize]),
            cycles_receive: named(&t.per_path[Path::Receive as usize]),
            cores,
            nic: crate::nic::device::NicStats {
                dim_profile: t.nic.dim.as_ref().map(|d| d.profile()),
                dim_changes: t.nic.dim.as_ref().map(|d| d.changes),
                ..t.nic.stats.clone()
            },
            bus: t.bus.stats().clone(),
            bus_utilization: t.bus.utilization(until),
            machine: None,
            messages,
            offload: t.call.engine_ref().report(),
            lro: offload.lro,
            gro: offload.gro,
            zero_copy: offload.zero_copy,
            delayed_acks: t.ack_gate.as_ref().map(|g| g.stats),
            socket_lock: t.timing.cpu.socket_backlog.then_some(t.lock_stats),
            rx_copy: (t.timing.memory.ddio.0 > 0).then(|| t.rx_copy.report(until)),
            send_skbs: (t.rtx.stats.sent > 0).then_some(t.rtx.stats),
        }
    }

    /// Cycles per layer of message `msg` on `path`.
    pub fn message_breakdown(&self, msg: u64, path: Path) -> Option<Breakdown> {
        self.per_msg.get(&(msg, path)).copied()
    }
}
