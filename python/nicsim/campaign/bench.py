"""Executor throughput: a 200-point sweep with 1 and 2 workers.

    python -m nicsim.campaign.bench                       # local pool, 1 and 2 workers
    python -m nicsim.campaign.bench --executor dask       # the same on a Dask LocalCluster
    python -m nicsim.campaign.bench --bytes 16MiB         # heavier points
    python -m nicsim.campaign.bench --file my-sweep.toml  # any sweep

Each configuration runs the whole sweep into a fresh results directory (no
cache hits), storing every result as a real sweep does. Worker start-up is
timed apart from the sweep. ``in-process`` is the same points run one after
the other in this process with no executor and no cache: the floor the
executors' overhead is measured against.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from typing import Any

from .cache import Cache
from .executors import DaskExecutor, Executor, LocalExecutor, available_cores, simulate
from .run import run_missing
from .sweep import Sweep

RATES = [
    "1Gbps", "1500Mbps", "2Gbps", "2500Mbps", "3Gbps", "4Gbps", "5Gbps", "6Gbps", "7Gbps",
    "8Gbps", "9Gbps", "10Gbps", "12Gbps", "15Gbps", "20Gbps", "25Gbps", "40Gbps", "50Gbps",
    "100Gbps", "200Gbps",
]  # fmt: skip
MTUS = ["1000B", "1500B", "2000B", "3000B", "4000B", "5000B", "6000B", "7000B", "8000B", "9000B"]

BASE: dict[str, Any] = {
    "name": "bench",
    "hosts": [{"name": "a"}, {"name": "b"}],
    "links": [{"endpoints": ["a", "b"], "propagation": "500ns"}],
    "workload": {"bulk": {"from": "a", "to": "b", "bytes": "1MiB"}},
}


def bench_sweep(size: str = "1MiB") -> Sweep:
    """200 points: ``size`` of bulk TCP at 20 link rates and 10 MTUs (the
    same points as scenarios/sweeps/bench-200.toml)."""
    return Sweep(
        BASE,
        grid={"links[0].rate": RATES, "links[0].mtu": MTUS},
        fixed={"workload.bulk.bytes": size},
        name=f"bench-{size}",
    )


def make(kind: str, workers: int) -> Executor:
    return LocalExecutor(workers) if kind == "local" else DaskExecutor(workers=workers)


def start(executor: Executor) -> None:
    """Bring the workers up before the clock starts."""
    if isinstance(executor, LocalExecutor):
        executor.start()
    elif isinstance(executor, DaskExecutor):
        executor.client.wait_for_workers(executor.workers)
        executor.client.run(lambda: __import__("nicsim"))  # import on every worker


def measure(sweep: Sweep, kind: str, workers: int) -> dict[str, Any]:
    """Run the sweep from scratch; wall-clock times and throughput."""
    t0 = time.perf_counter()
    with make(kind, workers) as executor, tempfile.TemporaryDirectory() as tmp:
        start(executor)
        t1 = time.perf_counter()
        with Cache(tmp) as cache:
            stats = run_missing(sweep, cache, executor, progress=False)
        t2 = time.perf_counter()
    if stats.computed != stats.runs or stats.errors:
        raise RuntimeError(f"the benchmark sweep did not complete: {stats}")
    return {
        "executor": kind,
        "workers": workers,
        "runs": stats.computed,
        "startup_s": t1 - t0,
        "sweep_s": t2 - t1,
        "points_per_s": stats.computed / (t2 - t1),
    }


def in_process(sweep: Sweep) -> dict[str, Any]:
    """Every point run here, one after another, nothing stored."""
    points = sweep.plan()
    t0 = time.perf_counter()
    for p in points:
        simulate(p.scenario, p.seed)
    wall = time.perf_counter() - t0
    return {
        "executor": "in-process",
        "workers": 1,
        "runs": len(points),
        "startup_s": 0.0,
        "sweep_s": wall,
        "points_per_s": len(points) / wall,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m nicsim.campaign.bench", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--executor", choices=["local", "dask"], action="append", help="repeatable [default: local]"
    )
    parser.add_argument(
        "--workers", type=int, action="append", help="repeatable [default: 1 and 2]"
    )
    parser.add_argument("--bytes", default="1MiB", help="bulk bytes per point [default: 1MiB]")
    parser.add_argument("--file", help="a sweep file to run instead of the built-in 200 points")
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs per configuration; the best is shown"
    )
    args = parser.parse_args(argv)
    sweep = Sweep.from_file(args.file) if args.file else bench_sweep(args.bytes)
    kinds = args.executor or ["local"]
    counts = args.workers or [1, 2]
    print(
        f"sweep {sweep.name}: {len(sweep.plan())} points; {available_cores()} cores",
        file=sys.stderr,
    )
    rows = [min((in_process(sweep) for _ in range(args.repeat)), key=lambda r: r["sweep_s"])]
    for kind in kinds:
        for n in counts:
            best = min(
                (measure(sweep, kind, n) for _ in range(args.repeat)), key=lambda r: r["sweep_s"]
            )
            rows.append(best)
    one = {r["executor"]: r["sweep_s"] for r in rows if r["workers"] == 1}
    print(
        "| executor | workers | runs | start-up (s) | sweep (s) | points/s | speed-up vs 1 worker |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        base = one.get(r["executor"])
        speedup = f"{base / r['sweep_s']:.2f}" if base else ""
        print(
            f"| {r['executor']} | {r['workers']} | {r['runs']} | {r['startup_s']:.2f} | "
            f"{r['sweep_s']:.2f} | {r['points_per_s']:.0f} | {speedup} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
