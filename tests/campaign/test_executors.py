"""Executors: the same results everywhere, and a dead worker costs no result."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

import nicsim
from nicsim.campaign import Cache, DaskExecutor, LocalExecutor, Sweep, make_executor, simulate

VOLATILE = ["wall_s"]
"""Columns that measure this machine, not the simulation."""


def reports(results: Path, frame: pd.DataFrame) -> list[dict]:
    with Cache(results) as cache:
        out = []
        for key in frame["key"]:
            record = cache.get(key)
            assert record is not None and record["status"] == "ok"
            out.append(record["report"])
        return out


def slow_sweep(base: Path, name: str) -> Sweep:
    """20 points of a few tens of milliseconds each."""
    return Sweep(
        base,
        grid={"links[0].rate": [f"{100 * i}Mbps" for i in range(1, 21)]},
        fixed={"workload.bulk.bytes": "32MiB"},
        name=name,
    )


def test_dask_gives_the_same_results_as_the_local_pool(
    tmp_path: Path, base_file: Path, local: Callable[[int], LocalExecutor]
) -> None:
    sweep = Sweep(
        base_file,
        grid={"links[0].rate": ["100Mbps", "1Gbps", "10Gbps"], "links[0].mtu": ["1000B", "1500B"]},
        replicas=2,
        name="same",
    )
    on_local = sweep.run(local(2), tmp_path / "local")
    with DaskExecutor(workers=2) as dask:
        assert dask.workers == 2
        on_dask = sweep.run(dask, tmp_path / "dask")
    pd.testing.assert_frame_equal(on_local.drop(columns=VOLATILE), on_dask.drop(columns=VOLATILE))
    assert reports(tmp_path / "local", on_local) == reports(tmp_path / "dask", on_dask)
    assert len(on_local) == 12 and set(on_local["status"]) == {"ok"}


def test_a_dask_worker_killed_mid_sweep_loses_no_result(
    tmp_path: Path, base_file: Path, local: Callable[[int], LocalExecutor]
) -> None:
    sweep = slow_sweep(base_file, "kill-dask")
    serial = sweep.run(local(1), tmp_path / "serial")
    killed: dict[str, object] = {}
    with DaskExecutor(workers=2) as dask:
        client = dask.client
        pids = client.run(os.getpid)

        def kill_a_busy_worker(point, record, stats) -> None:  # noqa: ANN001
            if killed:
                return
            busy = [w for w, keys in client.processing().items() if keys]
            assert busy, "no worker is running anything: the sweep is too short for this test"
            killed.update(address=busy[0], pid=pids[busy[0]], done=stats.computed)
            os.kill(pids[busy[0]], signal.SIGKILL)  # as the OOM killer would

        frame = sweep.run(dask, tmp_path / "dask", on_result=kill_a_busy_worker)
        alive = client.run(os.getpid, on_error="ignore")
    assert killed and killed["done"] < len(frame)
    assert killed["pid"] not in alive.values(), "the worker was not killed"
    assert list(frame["status"]) == ["ok"] * 20
    assert reports(tmp_path / "dask", frame) == reports(tmp_path / "serial", serial)
    pd.testing.assert_frame_equal(serial.drop(columns=VOLATILE), frame.drop(columns=VOLATILE))


def test_a_local_worker_killed_mid_sweep_is_retried(
    tmp_path: Path, base_file: Path, local: Callable[[int], LocalExecutor]
) -> None:
    sweep = slow_sweep(base_file, "kill-local")
    serial = sweep.run(local(1), tmp_path / "serial")
    killed: list[int] = []
    with LocalExecutor(2) as pool:

        def kill_a_worker(point, record, stats) -> None:  # noqa: ANN001
            if not killed:
                pid = next(iter(pool._pool._processes))  # type: ignore[union-attr]
                killed.append(stats.computed)
                os.kill(pid, signal.SIGKILL)

        frame = sweep.run(pool, tmp_path / "local", on_result=kill_a_worker)
    assert killed and killed[0] < 20
    assert list(frame["status"]) == ["ok"] * 20
    assert reports(tmp_path / "local", frame) == reports(tmp_path / "serial", serial)


def test_simulate_returns_plain_data(base_file: Path) -> None:
    text = base_file.read_text(encoding="utf-8")
    ok = simulate(text, 3)
    assert ok["status"] == "ok" and isinstance(ok["report"], str) and ok["wall_s"] > 0
    failed = simulate(
        text.replace('bytes = "256KiB"', 'bytes = "256KiB"\n[run]\ntime_limit = "1us"'), 3
    )
    assert failed["status"] == "failed" and "time_limit" in failed["error"]
    broken = simulate("not toml [", 3)
    assert broken["status"] == "error"


def test_make_executor() -> None:
    assert isinstance(make_executor("local", 3), LocalExecutor)
    assert make_executor("local", 3).workers == 3
    assert isinstance(make_executor("local", scheduler="tcp://127.0.0.1:1"), DaskExecutor)
    with pytest.raises(ValueError, match="unknown executor"):
        make_executor("ray")
    with pytest.raises(ValueError):
        LocalExecutor(0)


class OtherVersionExecutor(LocalExecutor):
    """Workers that run another nicsim version than this process."""

    def map(self, tasks):  # noqa: ANN001, ANN201
        for i, outcome in super().map(tasks):
            outcome["report"] = outcome["report"].replace(
                f'"nicsim_version": "{nicsim.__version__}"', '"nicsim_version": "0.0.0-other"'
            )
            yield i, outcome


def test_a_result_from_another_nicsim_version_is_refused(tmp_path: Path, base_file: Path) -> None:
    sweep = Sweep(base_file, grid={"links[0].rate": ["1Gbps", "10Gbps"]}, name="versions")
    with OtherVersionExecutor(1) as executor:
        stats = sweep.run_missing(executor, tmp_path / "results")
    assert stats.computed == 0 and len(stats.errors) == 2
    assert "the worker runs nicsim 0.0.0-other" in stats.errors[0]
    assert not list((tmp_path / "results" / "runs").glob("*/*.json"))
