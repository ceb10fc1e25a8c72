//! Micro-benchmarks of the hot paths (`make bench`, `cargo bench -p
//! nicsim-core --bench micro`): the event queue, the cost model's per-frame
//! CPU job, TSO segmentation and checksum fill per packet, LRO and GRO
//! coalescing per packet, driver IP fragmentation and speculative
//! defragmentation per fragment, the payload
//! pattern, and the offload (communication processor) command path. The
//! figures go into docs/performance.md; none is asserted in a test.

use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use nicsim_core::engine::{Dur, Priority, Scheduler, Time};
use nicsim_core::host::cpu::{Class, Core, Job, Layer};
use nicsim_core::host::timing;
use nicsim_core::nic::gro::{Gro, GroConfig};
use nicsim_core::nic::lro::{LroConfig, NicLro};
use nicsim_core::nic::offload::merge::Coalesced;
use nicsim_core::nic::offload::Coalescer;
use nicsim_core::nic::{frag, tso};
use nicsim_core::workload::pattern::Pattern;
use nicsim_core::{run_toml, RunOptions};
use nicsim_testkit::frame::TcpFrame;
use smoltcp::wire::{TcpControl, TcpTimestampRepr};

/// A small deterministic generator for event delays (no RNG crate needed).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
}

/// The hold model: a queue kept at `pending` events; each step pops the
/// earliest and schedules one at a random delay (up to 10 µs), as a run does.
fn event_queue(c: &mut Criterion) {
    let mut group = c.benchmark_group("event-queue");
    for pending in [16usize, 256, 4096] {
        let mut s: Scheduler<[u64; 4]> = Scheduler::new();
        let mut rng = Lcg(pending as u64);
        for i in 0..pending {
            s.at(Time(rng.next() % 10_000_000), Priority(i as u8 % 3), [i as u64; 4]);
        }
        group.throughput(Throughput::Elements(1));
        group.bench_function(format!("pop+push/{pending}-pending"), |b| {
            b.iter(|| {
                let (_, ev) = s.pop().expect("never empty");
                let delay = Dur(rng.next() % 10_000_000);
                s.after(delay, Priority((ev[0] % 3) as u8), black_box(ev));
            })
        });
    }
    // Schedule and cancel: a timer that is re-armed before it fires.
    let mut s: Scheduler<u64> = Scheduler::new();
    for i in 0..256 {
        s.at(Time(1_000_000 + i), Priority::DEVICE, i);
    }
    group.bench_function("schedule+cancel/256-pending", |b| {
        b.iter(|| {
            let k = s.after(Dur(500), Priority::DEVICE, 7);
            s.cancel(k);
            black_box(s.peek_time())
        })
    });
    group.finish();
}

/// The cost model: one received TCP segment's CPU job on the modern
/// profile (driver, device, IP, TCP pieces, each `cycles + mem × latency`),
/// submitted to the stack core and completed, as the receive path does
/// per frame.
fn cost_model(c: &mut Criterion) {
    let t = timing::resolve("hosts[0]", "modern-x86-pcie", &[]).expect("built-in profile");
    let core_id = t.stack_core();
    let mut core: Core<u32> = Core::new(t.core_hz(core_id), Dur(1_000_000_000));
    let mut now = Time::ZERO;
    let mut group = c.benchmark_group("cost-model");
    group.throughput(Throughput::Elements(1));
    group.bench_function("rx-segment-job", |b| {
        b.iter(|| {
            let k = &t.costs;
            let mut pieces = Vec::with_capacity(6);
            pieces.push((Layer::Driver, t.cycles_on(core_id, k.driver_rx)));
            pieces.push((Layer::Device, t.cycles_on(core_id, k.device_rx)));
            pieces.push((Layer::Ip, t.cycles_on(core_id, k.ip_rx)));
            if !t.nic.checksum_offload {
                pieces.push((Layer::Checksum, t.checksum_cycles_on(core_id, 1448)));
            }
            pieces.push((Layer::Tcp, t.cycles_on(core_id, k.tcp_rx)));
            let wake = core.submit(now, Job::new(Class::Softirq, pieces, 1)).expect("idle core starts it");
            now = wake.at;
            black_box(core.complete(now).expect("its completion"));
        })
    });
    group.bench_function("copy-64KiB-with-preemption", |b| {
        b.iter(|| {
            let copy = t.copy_cycles(65_536, false);
            let job = Job::new(Class::Task, vec![(Layer::Syscall, 300), (Layer::Copy, copy)], 2);
            core.submit(now, job).expect("idle core starts it");
            // An interrupt preempts the copy half-way; both complete.
            let irq = core.submit(now + Dur(1_000_000), Job::new(Class::Irq, vec![(Layer::Interrupt, 1400)], 3));
            let irq = irq.expect("the interrupt preempts");
            let (_, resumed) = core.complete(irq.at).expect("irq done");
            let resumed = resumed.expect("the copy resumes");
            now = resumed.at;
            black_box(core.complete(now).expect("copy done"));
        })
    });
    group.finish();
}

/// A TCP/IPv4 super-segment of `len` payload bytes with timestamps, its TCP
/// checksum left to the NIC (as smoltcp emits it for TSO).
fn super_frame(len: usize) -> Vec<u8> {
    let payload = vec![0x5au8; len];
    TcpFrame {
        seq: 1,
        ack: Some(1),
        window: 4000,
        control: TcpControl::Psh,
        timestamp: Some(TcpTimestampRepr::new(5, 6)),
        tcp_checksum: false,
        payload: &payload,
        ..TcpFrame::default()
    }
    .build()
}

/// A receive coalescer run over a batch of frames.
type Runner = fn(Vec<Vec<u8>>) -> Vec<Coalesced>;

/// `frames` through a fresh NIC LRO engine (the study's sizes), then a flush.
fn through_lro(frames: Vec<Vec<u8>>) -> Vec<Coalesced> {
    let mut lro = NicLro::new(LroConfig::default());
    let mut out = Vec::new();
    for f in frames {
        lro.push(f, &mut out);
    }
    lro.flush(&mut out);
    out
}

/// `frames` through fresh host GRO (64 flows, 64 KB aggregates), then a flush.
fn through_gro(frames: Vec<Vec<u8>>) -> Vec<Coalesced> {
    let mut gro = Gro::new(GroConfig::default());
    let mut out = Vec::new();
    for f in frames {
        gro.push(f, &mut out);
    }
    gro.flush(&mut out);
    out
}

/// TSO: a 64 KiB super-segment cut into 1448-byte segments (45 packets),
/// reported per output packet; and transmit checksum offload on one
/// 1500-byte frame.
fn offload_engines(c: &mut Criterion) {
    let mut group = c.benchmark_group("offload");
    let big = super_frame(65_160);
    let packets = tso::segment(&big, 1448).len() as u64;
    group.throughput(Throughput::Elements(packets));
    group.bench_function("tso-64KiB-to-mss1448", |b| b.iter(|| black_box(tso::segment(black_box(&big), 1448))));
    let one = super_frame(1448);
    group.throughput(Throughput::Elements(1));
    group.bench_function("tx-checksum-1500B", |b| {
        b.iter_batched_ref(|| one.clone(), |f| tso::fill_checksums(black_box(f)), BatchSize::SmallInput)
    });
    // Receive coalescing: the same 45 segments, in order, through the NIC
    // LRO engine and through GRO, per input packet (frames cloned outside
    // the timing).
    let segments = tso::segment(&big, 1448);
    group.throughput(Throughput::Elements(segments.len() as u64));
    for (name, run) in [("lro-nic-45-segments", through_lro as Runner), ("gro-45-segments", through_gro)] {
        group.bench_function(name, |b| {
            b.iter_batched(|| segments.clone(), |frames| black_box(run(frames)), BatchSize::SmallInput)
        });
    }
    // Kurmann's zero-copy path: a page of TCP data (4096 bytes, 12-byte
    // timestamp option) cut by the driver into IPv4 fragments for a
    // 1500-byte MTU; at the receiver the speculative defragmenter checks the
    // train against its guess as each fragment lands and rebuilds the
    // page-sized packet. Per fragment.
    let page = super_frame(4096);
    let fragments = frag::fragment(&page, 1500, 7).expect("a page packet fragments");
    let guess = frag::Guess::new(1500, 32, 4096);
    let whole: Vec<&[u8]> = fragments.iter().map(Vec::as_slice).collect();
    assert_eq!(frag::check_train(&whole, &guess), frag::Check::Complete, "the bench times the hit path");
    group.throughput(Throughput::Elements(fragments.len() as u64));
    group.bench_function("ip-fragment-page", |b| b.iter(|| black_box(frag::fragment(black_box(&page), 1500, 7))));
    group.bench_function("spec-defrag-check-rebuild-page", |b| {
        b.iter(|| {
            let train: Vec<&[u8]> = fragments.iter().map(Vec::as_slice).collect();
            for k in 1..=train.len() {
                black_box(frag::check_train(&train[..k], &guess));
            }
            black_box(frag::rebuild(&train))
        })
    });
    group.finish();
}

/// The payload pattern a bulk sender writes and its receiver checks, per
/// 64 KiB write.
fn payload_pattern(c: &mut Criterion) {
    let p = Pattern::new(1, 0);
    let mut buf = vec![0u8; 65_536];
    let mut group = c.benchmark_group("payload");
    group.throughput(Throughput::Bytes(buf.len() as u64));
    group.bench_function("pattern-fill-64KiB", |b| b.iter(|| p.fill(black_box(3), &mut buf)));
    p.fill(3, &mut buf);
    group.bench_function("pattern-check-64KiB", |b| b.iter(|| black_box(p.first_mismatch(black_box(3), &buf))));
    group.finish();
}

/// The offload command path: 200 one-byte request/response transactions
/// between two ortiz-p4-400 hosts with the stack on the communication
/// processor (every socket call is a command, every result a completion),
/// against the same with offload off; per transaction.
fn offload_command_path(c: &mut Criterion) {
    let scenario = |enabled: bool| {
        format!(
            r#"
name = "offload-rr"
[[hosts]]
name = "a"
profile = "ortiz-p4-400"
offload = {{ enabled = {enabled} }}
[[hosts]]
name = "b"
profile = "ortiz-p4-400"
offload = {{ enabled = {enabled} }}
[[links]]
endpoints = ["a", "b"]
rate = "1Gbps"
propagation = "10ns"
mtu = "9000B"
[workload.request_response]
client = "a"
server = "b"
request = "1B"
response = "1B"
transactions = 200
"#
        )
    };
    let mut group = c.benchmark_group("offload-command-path");
    group.sample_size(20);
    group.throughput(Throughput::Elements(200));
    for enabled in [true, false] {
        let text = scenario(enabled);
        run_toml(&text, &RunOptions::default()).expect("scenario runs");
        let name = if enabled { "rr-1B-offload-on" } else { "rr-1B-offload-off" };
        group.bench_function(name, |b| b.iter(|| run_toml(&text, &RunOptions::default()).expect("runs")));
    }
    group.finish();
}

criterion_group!(benches, event_queue, cost_model, offload_engines, payload_pattern, offload_command_path);
criterion_main!(benches);
