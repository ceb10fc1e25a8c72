"""The result cache: reruns do no work, a changed knob reruns only its
points, interrupts leave a consistent cache, and results describe themselves."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

import nicsim
from nicsim.campaign import Cache, LocalExecutor, Sweep, run_key

from .conftest import CountingExecutor

RATES = ["100Mbps", "200Mbps", "500Mbps", "1Gbps"]
MTUS = ["1000B", "1500B"]


def rate_sweep(base: Path, rates: list[str] = RATES, **kw: object) -> Sweep:
    return Sweep(base, grid={"links[0].rate": rates, "links[0].mtu": MTUS}, name="rates", **kw)  # type: ignore[arg-type]


def test_a_finished_sweep_reruns_nothing(
    tmp_path: Path, base_file: Path, counting: CountingExecutor
) -> None:
    results = tmp_path / "results"
    first = rate_sweep(base_file).run(counting, results)
    assert len(counting.tasks) == 8
    assert list(first["status"]) == ["ok"] * 8
    counting.tasks.clear()
    stats = rate_sweep(base_file).run_missing(counting, results)
    assert counting.tasks == []
    assert (stats.runs, stats.cached, stats.computed) == (8, 8, 0)
    again = rate_sweep(base_file).run(counting, results)
    assert counting.tasks == []
    pd.testing.assert_frame_equal(first, again)


def test_changing_one_knob_value_reruns_only_its_points(
    tmp_path: Path, base_file: Path, counting: CountingExecutor
) -> None:
    results = tmp_path / "results"
    rate_sweep(base_file).run(counting, results)
    counting.tasks.clear()
    changed = ["100Mbps", "200Mbps", "2Gbps", "1Gbps"]  # 500Mbps -> 2Gbps
    frame = rate_sweep(base_file, changed).run(counting, results)
    assert len(counting.tasks) == 2  # 2Gbps at both MTUs
    assert {nicsim.resolve(text)["links"][0]["rate"] for text, _ in counting.tasks} == {"2Gbps"}
    assert list(frame["links[0].rate"]) == [r for r in changed for _ in MTUS]
    assert list(frame["status"]) == ["ok"] * 8
    # The sweep's table has its current points only; the old runs stay cached.
    with Cache(results) as cache:
        assert len(list((results / "runs").glob("*/*.json"))) == 10
        assert cache.status("rates") == {"ok": 8, "failed": 0, "missing": 0, "total": 8}


def test_a_replica_added_reruns_only_the_new_seed(
    tmp_path: Path, base_file: Path, counting: CountingExecutor
) -> None:
    results = tmp_path / "results"
    rate_sweep(base_file).run(counting, results)
    counting.tasks.clear()
    frame = rate_sweep(base_file, replicas=2).run(counting, results)
    assert sorted(seed for _, seed in counting.tasks) == [2] * 8
    assert list(frame["seed"]) == [1, 2] * 8


class Interrupt(KeyboardInterrupt):
    pass


def test_an_interrupted_sweep_leaves_a_consistent_cache_and_resumes(
    tmp_path: Path,
    base_file: Path,
    counting: CountingExecutor,
    local: Callable[[int], LocalExecutor],
) -> None:
    results = tmp_path / "results"
    sweep = rate_sweep(base_file, RATES + ["2Gbps", "5Gbps"])  # 12 runs
    seen = []

    def stop_after_five(point, record, stats) -> None:  # noqa: ANN001
        seen.append(record["key"])
        if len(seen) == 5:
            raise Interrupt

    with pytest.raises(Interrupt):
        sweep.run_missing(local(2), results, on_result=stop_after_five)
    files = sorted(p.stem for p in (results / "runs").glob("*/*.json"))
    assert files == sorted(seen)  # exactly the stored runs, each complete
    assert not list(results.rglob(".tmp-*"))
    for key in files:
        assert Cache(results).get(key)["status"] == "ok"
    with sqlite3.connect(results / "index.sqlite") as db:
        assert sorted(k for (k,) in db.execute("SELECT key FROM runs")) == files

    stats = sweep.run_missing(counting, results)
    assert (stats.cached, stats.computed) == (5, 7)
    assert len(counting.tasks) == 7
    assert sorted(p.key for p in sweep.plan()) == sorted(
        p.stem for p in (results / "runs").glob("*/*.json")
    )

    serial = sweep.run(local(1), tmp_path / "serial")
    resumed = sweep.run(counting, results)
    assert [reports(results, k) for k in resumed["key"]] == [
        reports(tmp_path / "serial", k) for k in serial["key"]
    ]


def reports(results: Path, key: str) -> dict:
    record = Cache(results).get(key)
    assert record is not None
    return record["report"]


def test_a_lost_index_row_or_a_broken_file_is_repaired(
    tmp_path: Path, base_file: Path, counting: CountingExecutor
) -> None:
    results = tmp_path / "results"
    sweep = rate_sweep(base_file)
    before = sweep.run(counting, results)
    keys = list(before["key"])
    # A crash between writing the file and indexing it: the row is missing.
    # An unreadable file (cannot come from nicsim's atomic writes, but a disk
    # can) is found when its row is missing too, e.g. after an index rebuild.
    with sqlite3.connect(results / "index.sqlite") as db:
        db.executemany("DELETE FROM runs WHERE key = ?", [(keys[0],), (keys[1],)])
    (results / "runs" / keys[1][:2] / f"{keys[1]}.json").write_text("{trunc", encoding="utf-8")
    counting.tasks.clear()
    after = sweep.run(counting, results)
    assert len(counting.tasks) == 1  # only the broken file is recomputed
    pd.testing.assert_frame_equal(before.drop(columns="wall_s"), after.drop(columns="wall_s"))


def test_the_index_rebuilds_from_the_files(
    tmp_path: Path, base_file: Path, counting: CountingExecutor
) -> None:
    results = tmp_path / "results"
    before = rate_sweep(base_file).run(counting, results)
    (results / "index.sqlite").unlink()
    for extra in results.glob("index.sqlite-*"):
        extra.unlink()
    with Cache(results) as cache:
        assert cache.rebuild_index() == 8
        pd.testing.assert_frame_equal(before, cache.to_pandas("rates"))


def test_results_describe_themselves(
    tmp_path: Path, base_file: Path, counting: CountingExecutor
) -> None:
    results = tmp_path / "results"
    frame = rate_sweep(base_file, replicas=2).run(counting, results)
    assert list(frame.columns[:7]) == [
        "sweep",
        "point",
        "links[0].rate",
        "links[0].mtu",
        "replica",
        "seed",
        "key",
    ]
    row = frame.iloc[3]
    assert (row["links[0].rate"], row["links[0].mtu"], row["replica"], row["seed"]) == (
        "100Mbps",
        "1500B",
        1,
        2,
    )
    assert row["nicsim_version"] == nicsim.__version__
    assert row["verified"]
    assert row["goodput_bps"] == pytest.approx(100e6 * 1448 / 1538, rel=0.05)
    with Cache(results) as cache:
        record = cache.get(row["key"])
        result = cache.result(row["key"])
    assert record is not None and result is not None
    assert record["seed"] == 2 and record["nicsim_version"] == nicsim.__version__
    assert record["scenario"]["links"][0]["rate"] == "100Mbps"  # every parameter, resolved
    assert record["scenario"]["hosts"][0]["tcp"]["rx_buffer"] == "256KiB"  # defaults too
    assert record["params"] == {"links[0].rate": "100Mbps", "links[0].mtu": "1500B"}
    assert result.summary["goodput_bps"] == row["goodput_bps"]
    # The stored report is what a direct run of the point gives.
    point = rate_sweep(base_file, replicas=2).plan()[3]
    direct = json.loads(nicsim._core.run_scenario(point.scenario, "<sweep>", point.seed, None))
    assert record["report"] == direct


def test_export_csv_and_parquet(
    tmp_path: Path, base_file: Path, counting: CountingExecutor
) -> None:
    results = tmp_path / "results"
    frame = rate_sweep(base_file).run(counting, results)
    with Cache(results) as cache:
        csv = cache.export(tmp_path / "out" / "rates.csv")
        parquet = cache.export(tmp_path / "out" / "rates.parquet")
        with pytest.raises(ValueError, match=r"\.csv or \.parquet"):
            cache.export(tmp_path / "rates.xlsx")
    from_csv = pd.read_csv(csv)
    assert list(from_csv.columns) == list(frame.columns)
    assert list(from_csv["links[0].rate"]) == list(frame["links[0].rate"])
    assert list(from_csv["goodput_bps"]) == pytest.approx(list(frame["goodput_bps"]))
    from_parquet = pd.read_parquet(parquet)
    assert list(from_parquet["key"]) == list(frame["key"])
    assert list(from_parquet["goodput_bps"]) == list(frame["goodput_bps"])


def test_a_failed_simulation_is_cached_as_failed(
    tmp_path: Path, base_file: Path, counting: CountingExecutor
) -> None:
    results = tmp_path / "results"
    # 256 KiB cannot cross a 10 Mb/s link in 100 ms: the run fails.
    sweep = Sweep(
        base_file,
        grid={"links[0].rate": ["10Mbps", "1Gbps"]},
        fixed={"run.time_limit": "100ms"},
        name="limits",
    )
    frame = sweep.run(counting, results)
    assert list(frame["status"]) == ["failed", "ok"]
    assert "did not finish within run.time_limit" in frame["error"][0]
    counting.tasks.clear()
    stats = sweep.run_missing(counting, results)
    assert counting.tasks == [] and stats.cached == 2


def test_verify_removes_unreadable_files_and_durable_writes_read_back(
    tmp_path: Path, base_file: Path, counting: CountingExecutor
) -> None:
    results = tmp_path / "results"
    frame = rate_sweep(base_file).run(counting, results)
    keys = list(frame["key"])
    (results / "runs" / keys[2][:2] / f"{keys[2]}.json").write_text("", encoding="utf-8")
    (results / "runs" / keys[3][:2] / f"{keys[3]}.json").write_text('{"key": "x"}', encoding="utf-8")
    with Cache(results) as cache:
        assert sorted(cache.verify()) == sorted(keys[2:4])
        assert cache.status("rates")["missing"] == 2
        record = cache.get(keys[0])
    assert record is not None
    with Cache(tmp_path / "durable", durable=True) as durable:
        durable.put(record)
        assert durable.get(keys[0]) == record


def test_ctrl_c_while_a_file_is_written_leaves_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGINT arriving right after the temporary file is created (the window
    that once left ``.tmp-*`` files in interrupted sweeps) takes effect only
    once the file is complete and renamed into place."""
    import os
    import signal
    import tempfile

    from nicsim.campaign import cache as cache_module

    real_mkstemp = tempfile.mkstemp

    def mkstemp_then_ctrl_c(*args: object, **kwargs: object) -> tuple[int, str]:
        made = real_mkstemp(*args, **kwargs)  # type: ignore[call-overload]
        os.kill(os.getpid(), signal.SIGINT)
        return made

    monkeypatch.setattr(cache_module.tempfile, "mkstemp", mkstemp_then_ctrl_c)
    target = tmp_path / "run.json"
    with pytest.raises(KeyboardInterrupt):
        cache_module.write_atomic(target, '{"whole": true}')
    assert json.loads(target.read_text(encoding="utf-8")) == {"whole": True}
    assert not list(tmp_path.glob(".tmp-*"))


def test_a_run_key_changes_with_the_text_of_a_profile_its_hosts_name() -> None:
    """A rebuilt profile with the same nicsim version must not reuse a run."""
    timed = {"hosts": [{"name": "a", "profile": "p"}, {"name": "b", "profile": None}]}
    old = run_key(timed, 1, "1.0", profile_text=lambda name: "clock = 1")
    new = run_key(timed, 1, "1.0", profile_text=lambda name: "clock = 2")
    assert old != new
    assert old == run_key(timed, 1, "1.0", profile_text=lambda name: "clock = 1")


def test_a_run_key_without_profiles_is_the_scenario_seed_version_and_build() -> None:
    ideal = {"hosts": [{"name": "a", "profile": None}]}
    canonical = json.dumps(
        {"scenario": ideal, "seed": 3, "version": "v", "build": "b"}, sort_keys=True, separators=(",", ":")
    )
    assert run_key(ideal, 3, "v", build="b") == hashlib.sha256(canonical.encode()).hexdigest()


def test_a_run_key_changes_with_the_native_build() -> None:
    """Rebuilt code with the same nicsim version must not reuse a run."""
    from nicsim.campaign import cache as cache_module

    ideal = {"hosts": [{"name": "a", "profile": None}]}
    assert run_key(ideal, 1, "1.0", build="x") != run_key(ideal, 1, "1.0", build="y")
    # By default: the native module's file, the same within a process.
    assert run_key(ideal, 1, "1.0") == run_key(ideal, 1, "1.0", build=cache_module.native_build())
    assert len(cache_module.native_build()) == 64
