"""Fixtures for the campaign tests: small, quick base scenarios and an
executor that counts what it is asked to run."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from nicsim.campaign import LocalExecutor
from nicsim.campaign.executors import Outcome, Task

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "scenarios"
SWEEPS = SCENARIOS / "sweeps"

SMALL_BULK = """\
name = "small-bulk"
description = "256 KiB over GbE: quick enough for many points"
seed = 1

[[hosts]]
name = "a"

[[hosts]]
name = "b"

[[links]]
endpoints = ["a", "b"]
rate = "1Gbps"
propagation = "500ns"
mtu = "1500B"

[workload.bulk]
from = "a"
to = "b"
bytes = "256KiB"
"""


@pytest.fixture
def base_file(tmp_path: Path) -> Path:
    """SMALL_BULK as a file in its own folder."""
    path = tmp_path / "scenarios" / "small-bulk.toml"
    path.parent.mkdir(parents=True)
    path.write_text(SMALL_BULK, encoding="utf-8")
    return path


class CountingExecutor(LocalExecutor):
    """A two-worker :class:`LocalExecutor` that records the tasks it is given."""

    def __init__(self) -> None:
        super().__init__(2)
        self.tasks: list[Task] = []

    def map(self, tasks: Sequence[Task]) -> Iterator[tuple[int, Outcome]]:
        self.tasks += list(tasks)
        return super().map(tasks)


@pytest.fixture
def counting() -> Iterator[CountingExecutor]:
    executor = CountingExecutor()
    with executor:
        yield executor


@pytest.fixture
def local() -> Iterator[Callable[[int], LocalExecutor]]:
    """Makes local executors, all closed when the test ends."""
    made: list[LocalExecutor] = []

    def make(workers: int = 2) -> LocalExecutor:
        made.append(LocalExecutor(workers))
        return made[-1]

    yield make
    for executor in made:
        executor.close()
