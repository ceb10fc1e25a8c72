//! Conservation and bookkeeping invariants of whole runs: every frame
//! offered to a link is dropped, lost or delivered, every delivered copy
//! reaches the far host (its stack, or its NIC for a timed host), time never
//! runs backwards, and `Sim::check_invariants` notices when a counter lies.

use nicsim_core::config;
use nicsim_core::engine::{Dur, Time};
use nicsim_core::probe::observer::{Observer, ProbeEvent, EVENTS};
use nicsim_core::sim::Sim;

use crate::ideal::{bulk, two_hosts};

/// Build and run `text` until the workload finishes, then `drain` more so
/// every frame still on a wire lands.
fn settled(text: &str, seed: u64, drain_s: u64) -> Sim {
    let s = config::parse(text).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Sim::build(&s, seed).unwrap();
    sim.run(Time::ZERO + s.run.time_limit.dur(), Dur(drain_s * 1_000_000_000_000)).unwrap();
    assert!(sim.finished_at.is_some(), "the workload finished");
    sim
}

/// Per direction: nothing offered went missing. `offered` is what the
/// sending host emitted, counted by the host, not by the link.
fn assert_conserved(sim: &Sim) {
    sim.check_invariants().unwrap();
    for link in &sim.links {
        for (d, chan) in link.chans.iter().enumerate() {
            let st = &chan.stats;
            assert_eq!(st.frames, st.delivered + st.lost, "{} dir {d}: started = delivered + lost", link.name);
            assert_eq!(chan.queued(), 0, "{} dir {d}: the queue drained", link.name);
        }
    }
}

#[test]
fn a_lossless_transfer_delivers_every_frame_the_stack_emitted() {
    let sim = settled(&two_hosts("rate = \"1Gbps\"", "", &bulk("2MB")), 1, 2);
    assert_conserved(&sim);
    let (a, b) = (&sim.hosts[0].stats, &sim.hosts[1].stats);
    let ab = &sim.links[0].chans[0].stats;
    let ba = &sim.links[0].chans[1].stats;
    assert_eq!((ab.queue_drops, ab.lost, ba.queue_drops, ba.lost), (0, 0, 0, 0));
    assert_eq!(ab.frames, a.tx_frames, "every frame a emitted went on the wire");
    assert_eq!(b.rx_frames, ab.delivered, "b's stack took every frame that arrived");
    assert_eq!(ba.frames, b.tx_frames);
    assert_eq!(a.rx_frames, ba.delivered);
}

#[test]
fn an_impaired_transfer_accounts_for_every_copy() {
    let link = "rate = \"1Gbps\"\nqueue = 16\nbackpressure = false\n\
                impairments = { loss = 0.02, duplicate = 0.03, reorder = 0.03, corrupt = 0.01 }";
    let sim = settled(&(two_hosts(link, "", &bulk("1MB")) + "[run]\ntime_limit = \"600s\"\n"), 4, 5);
    assert_conserved(&sim);
    let st = &sim.links[0].chans[0].stats;
    assert!(st.lost > 0 && st.duplicated > 0 && st.queue_drops > 0, "the impairments happened: {st:?}");
    // Offered to the link = emitted by a's stack; each one dropped, lost or delivered.
    assert_eq!(sim.hosts[0].stats.tx_frames, st.queue_drops + st.lost + st.delivered);
    // An ideal host's stack takes every copy that arrives, duplicates included.
    assert_eq!(sim.hosts[1].stats.rx_frames, st.delivered + st.duplicated);
}

#[test]
fn a_timed_receiver_takes_in_or_drops_every_frame_at_its_nic() {
    let host = "profile = \"kurmann-pii-400\"";
    let link = "rate = \"1Gbps\"\nimpairments = { duplicate = 0.02 }";
    let sim = settled(&two_hosts(link, host, &bulk("1MB")), 2, 2);
    assert_conserved(&sim);
    let st = &sim.links[0].chans[0].stats;
    let until = sim.now();
    let nic = sim.timing_report(1, until).expect("timed").nic;
    assert_eq!(nic.rx_frames + nic.rx_fifo_drops, st.delivered + st.duplicated);
    assert!(nic.max_rx_ring_used > 0);
}

#[test]
fn a_tso_sender_puts_every_segment_it_cuts_on_the_wire() {
    let host = "profile = \"modern-x86-pcie\"\nnic = { tso = true }";
    let sim = settled(&two_hosts("rate = \"10Gbps\"", host, &bulk("4MB")), 3, 2);
    assert_conserved(&sim);
    let until = sim.now();
    let nic = sim.timing_report(0, until).expect("timed").nic;
    let st = &sim.links[0].chans[0].stats;
    assert_eq!(nic.tx_frames, st.frames + st.queue_drops, "every frame the NIC sent was offered to the wire");
    assert!(st.frames > sim.hosts[0].stats.tx_frames, "TSO: more frames on the wire than the stack emitted");
}

#[test]
fn a_miscounted_link_is_caught() {
    let mut sim = settled(&two_hosts("", "", &bulk("100kB")), 1, 1);
    sim.check_invariants().unwrap();
    sim.links[0].chans[1].stats.delivered += 1;
    let e = sim.check_invariants().unwrap_err();
    assert!(e.starts_with("links[0] direction 1:"), "{e}");
}

#[cfg(debug_assertions)]
#[test]
#[should_panic(expected = "simulator invariant violated")]
fn debug_builds_check_the_invariants_at_the_end_of_every_run() {
    let s = config::parse(&two_hosts("", "", &bulk("100kB"))).unwrap();
    let mut sim = Sim::build(&s, 1).unwrap();
    sim.run(Time(1_000_000_000), Dur::ZERO).unwrap();
    sim.links[0].chans[0].stats.lost += 1;
    sim.run(Time(2_000_000_000), Dur::ZERO).unwrap();
}

/// Records the time of every probe event.
#[derive(Default)]
struct Clock {
    last: Time,
    events: u64,
    backwards: Vec<(Time, Time)>,
}

impl Observer for Clock {
    fn wants(&self, _: &str) -> bool {
        true
    }
    fn on_event(&mut self, e: &ProbeEvent<'_>) {
        if e.time < self.last {
            self.backwards.push((self.last, e.time));
        }
        self.last = e.time;
        self.events += 1;
    }
}

#[test]
fn time_never_runs_backwards_in_what_probes_see() {
    let host = "profile = \"kurmann-pii-400\"";
    let text = two_hosts("impairments = { reorder = 0.05, reorder_delay = \"30us\" }", host, &bulk("500kB"));
    let s = config::parse(&text).unwrap();
    let mut sim = Sim::build(&s, 1).unwrap();
    let clock = std::rc::Rc::new(std::cell::RefCell::new(Clock::default()));
    sim.probes = nicsim_core::probe::observer::Probes::new(Box::new(Shared(clock.clone())));
    sim.run(Time::ZERO + s.run.time_limit.dur(), Dur(1_000_000_000)).unwrap();
    let c = clock.borrow();
    assert!(c.events > 1000, "{} events seen; every kind of {EVENTS:?} is wanted", c.events);
    assert!(c.backwards.is_empty(), "time ran backwards: {:?}", &c.backwards[..c.backwards.len().min(5)]);
}

/// An observer shared with the test.
struct Shared(std::rc::Rc<std::cell::RefCell<Clock>>);

impl Observer for Shared {
    fn wants(&self, name: &str) -> bool {
        self.0.borrow().wants(name)
    }
    fn on_event(&mut self, e: &ProbeEvent<'_>) {
        self.0.borrow_mut().on_event(e);
    }
}
