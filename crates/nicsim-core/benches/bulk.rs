//! Simulation speed: a 10 GbE bulk TCP transfer between ideal hosts,
//! reported by criterion as data segments per wall-clock second
//! (`make bench`). The figure goes into the docs and release notes; it is
//! never asserted in a test.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use nicsim_core::{run_toml, RunOptions};

fn scenario(bytes: &str) -> String {
    let path = format!("{}/../../scenarios/10gbe-bulk.toml", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).expect("scenario").replace("512MiB", bytes)
}

fn bulk_10gbe(c: &mut Criterion) {
    let text = scenario("64MiB");
    let probe = run_toml(&text, &RunOptions::default()).expect("scenario runs");
    let segments = probe.summary.data_segments;
    let mut group = c.benchmark_group("10gbe-bulk-64MiB");
    group.sample_size(10);
    group.throughput(Throughput::Elements(segments));
    group.bench_function("data-segments", |b| {
        b.iter(|| run_toml(&text, &RunOptions::default()).expect("scenario runs"))
    });
    group.finish();
}

criterion_group!(benches, bulk_10gbe);
criterion_main!(benches);
