//! A store-and-forward Ethernet switch with a static MAC table: a frame that
//! has arrived whole through one port is forwarded, after the switch's
//! latency, to the port towards its destination address, or flooded to every
//! other port (broadcast, multicast or an unknown address). The links must
//! form a tree; the table is filled when the switches are connected, so no
//! address is learnt and no frame is flooded for want of learning. Not
//! modelled: VLANs, spanning tree, output-queue scheduling beyond each
//! link's own FIFO. Units: picoseconds.
//!
//! ```text
//!  host ── link ──▶ [port 0]  switch  [port 1] ── link ──▶ host
//!                              │ MAC table: address → port
//!                           [port 2] ── link ──▶ host
//! ```

use std::collections::HashMap;

use serde::Serialize;

use crate::engine::Dur;

/// A store-and-forward Ethernet switch with a static MAC table.
pub struct Switch {
    /// Its name.
    pub name: String,
    /// Time from a frame's arrival to its forwarding.
    pub latency: Dur,
    /// Ports: (link, which end of it the switch is).
    pub ports: Vec<(usize, usize)>,
    /// Port towards each host's MAC address (looked up, never iterated).
    table: HashMap<[u8; 6], usize>,
    /// Counters.
    pub stats: SwitchStats,
}

/// Counters of a switch.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SwitchStats {
    /// Frames that arrived whole.
    pub received: u64,
    /// Copies sent to one port by MAC address.
    pub forwarded: u64,
    /// Frames sent to every other port (broadcast, multicast or unknown address).
    pub flooded: u64,
    /// Copies dropped because the outgoing link's queue was full.
    pub queue_drops: u64,
}

impl Switch {
    /// A switch with no port yet.
    pub fn new(name: &str, latency: Dur) -> Switch {
        Switch {
            name: name.to_string(),
            latency,
            ports: Vec::new(),
            table: HashMap::new(),
            stats: SwitchStats::default(),
        }
    }

    /// The ports a frame that came in through `ingress` leaves by: the port
    /// of its destination address, or every other port. A frame too short
    /// to have an address goes nowhere.
    pub fn route(&mut self, ingress: usize, frame: &[u8]) -> Vec<usize> {
        self.stats.received += 1;
        let Some(dst) = frame.get(..6) else { return Vec::new() };
        let dst: [u8; 6] = dst.try_into().expect("six bytes");
        let known = if dst[0] & 1 == 0 { self.table.get(&dst).copied() } else { None };
        match known {
            Some(p) if p == ingress => Vec::new(),
            Some(p) => {
                self.stats.forwarded += 1;
                vec![p]
            }
            None => {
                self.stats.flooded += 1;
                (0..self.ports.len()).filter(|&p| p != ingress).collect()
            }
        }
    }
}

/// Attach `switches` to the links whose ends are `ends` (node indices: the
/// `macs.len()` hosts first, then the switches) and fill their MAC tables:
/// the port towards a host is the one whose side of the tree holds it.
/// Returns, per link, the switch's port number at each end (`usize::MAX`
/// where the end is a host).
pub fn connect(switches: &mut [Switch], ends: &[[usize; 2]], macs: &[[u8; 6]]) -> Vec<[usize; 2]> {
    let n = macs.len();
    let mut ports = vec![[usize::MAX; 2]; ends.len()];
    let mut adjacent: Vec<Vec<usize>> = vec![Vec::new(); n + switches.len()];
    for (l, link) in ends.iter().enumerate() {
        for e in 0..2 {
            adjacent[link[e]].push(link[1 - e]);
            if let Some(w) = link[e].checked_sub(n) {
                ports[l][e] = switches[w].ports.len();
                switches[w].ports.push((l, e));
            }
        }
    }
    for (w, sw) in switches.iter_mut().enumerate() {
        for (p, &(l, e)) in sw.ports.iter().enumerate() {
            // Every host beyond this port (the links form a tree).
            let mut seen = vec![false; adjacent.len()];
            seen[n + w] = true;
            let mut stack = vec![ends[l][1 - e]];
            while let Some(v) = stack.pop() {
                if std::mem::replace(&mut seen[v], true) {
                    continue;
                }
                if v < n {
                    sw.table.insert(macs[v], p);
                }
                stack.extend(adjacent[v].iter().copied().filter(|&u| !seen[u]));
            }
        }
    }
    ports
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: [u8; 6] = [2, 0, 0, 0, 0, 1];
    const B: [u8; 6] = [2, 0, 0, 0, 0, 2];
    const C: [u8; 6] = [2, 0, 0, 0, 0, 3];

    /// Hosts 0, 1, 2 on switch 3 (ports 0, 1, 2).
    fn star() -> Switch {
        let mut sw = [Switch::new("sw", Dur(0))];
        let ports = connect(&mut sw, &[[0, 3], [1, 3], [3, 2]], &[A, B, C]);
        assert_eq!(ports, vec![[usize::MAX, 0], [usize::MAX, 1], [2, usize::MAX]]);
        let [sw] = sw;
        sw
    }

    fn to(dst: [u8; 6]) -> Vec<u8> {
        let mut f = dst.to_vec();
        f.extend_from_slice(&A);
        f
    }

    #[test]
    fn a_known_address_goes_to_its_port_only() {
        let mut sw = star();
        assert_eq!(sw.route(0, &to(C)), vec![2]);
        assert_eq!(sw.route(2, &to(B)), vec![1]);
        assert_eq!((sw.stats.received, sw.stats.forwarded, sw.stats.flooded), (2, 2, 0));
    }

    #[test]
    fn broadcast_and_unknown_addresses_flood_every_other_port() {
        let mut sw = star();
        assert_eq!(sw.route(1, &to([0xff; 6])), vec![0, 2]);
        assert_eq!(sw.route(0, &to([2, 9, 9, 9, 9, 9])), vec![1, 2]);
        assert_eq!(sw.stats.flooded, 2);
    }

    #[test]
    fn a_frame_for_its_own_port_or_without_an_address_goes_nowhere() {
        let mut sw = star();
        assert!(sw.route(0, &to(A)).is_empty());
        assert!(sw.route(0, &[1, 2, 3]).is_empty());
        assert_eq!((sw.stats.received, sw.stats.forwarded, sw.stats.flooded), (2, 0, 0));
    }
}
