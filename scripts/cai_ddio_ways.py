"""How much the Cai reproduction's L3 miss rate rests on nicsim's DDIO model.

cai-xeon-6128 keeps exactly the newest `memory.ddio` bytes the NIC wrote in
the L3, so its L3 miss rate (`l3_miss_pct.<run>`: the share of the received
bytes the reads copied from memory) steps from 0 to about 100 %. This runs
the study's runs that have the row (its buffer runs, its incast runs with all
optimisations, and the long flow on the NIC's socket, `all_opts`) again with
`memory.ddio_ways` on both hosts, which models DDIO as ways of each L3 set
(docs/models/memory.md), and prints each run's throughput, throughput per
receiver core and L3 miss rate. Those runs are not the reproduction's (the
profile does not use the ways); the Cai page gives what this printed.

    .venv/bin/python scripts/cai_ddio_ways.py [WAYS] [RESULTS]

WAYS defaults to 2 (Intel's default IIO LLC ways mask, 0x600); the runs are
cached in RESULTS (default results/cai-ddio-ways).
"""

from __future__ import annotations

import sys
from dataclasses import replace

from nicsim.campaign.cache import Cache
from nicsim.campaign.executors import LocalExecutor
from nicsim.campaign.run import run_missing
from nicsim.studies.cai.experiments import BUFFERS, CONFIG, INCAST, INCAST_CACHE_MISS, SIDES
from nicsim.studies.cai.metrics import measure
from nicsim.studies.framework import Run
from nicsim.studies.records import RunReport


def runs(ways: int) -> list[Run]:
    """The runs with the L3 miss row, with `ways` DDIO ways on both hosts."""
    base = [b.run() for b in BUFFERS] + [v.run() for v in INCAST if v.config in INCAST_CACHE_MISS]
    base.append(CONFIG["all_opts"].run())
    knobs = {f"hosts[{i}].memory.ddio_ways": ways for i in range(len(SIDES))}
    return [replace(r, key=f"{r.key}-ways{ways}", fixed={**r.fixed, **knobs}) for r in base]


def main() -> None:
    ways = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    results = sys.argv[2] if len(sys.argv) > 2 else "results/cai-ddio-ways"
    executor = LocalExecutor()
    try:
        with Cache(results) as cache:
            for run in runs(ways):
                sweep = run.sweep("cai")
                stats = run_missing(sweep, cache, executor, progress=False)
                if stats.errors:
                    raise SystemExit(f"{run.key}: {stats.errors[0]}")
                (point,) = sweep.plan()
                record = cache.get(point.key)
                if record is None or record.get("status") != "ok":
                    raise SystemExit(f"{run.key}: the run did not complete")
                m = measure(RunReport.parse(record["report"]))
                print(f"{run.key:30s} {m.throughput_gbps:7.2f} Gb/s {m.per_core_gbps:7.2f} Gb/s a core"
                      f" {m.l3_miss_pct:7.2f} % L3 miss", flush=True)
    finally:
        executor.close()


if __name__ == "__main__":
    main()
