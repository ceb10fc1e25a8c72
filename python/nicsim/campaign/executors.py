"""Executors: where a sweep's simulations run.

Every executor takes a list of tasks, each a plain ``(scenario_text, seed)``
pair, and yields ``(task_index, outcome)`` as runs finish, in any order. An
outcome is a plain dict made by :func:`simulate` in the worker process:

* ``{"status": "ok", "report": <report JSON text>, "wall_s": s}``
* ``{"status": "failed", "error": msg, "wall_s": s}``: the simulation ran and
  failed (for example the workload did not finish within its time limit); as
  deterministic as a result, so it is cached
* ``{"status": "error", "error": msg}``: the run could not be done (a worker
  died too often, an unexpected exception); not cached, retried next time

Only plain data crosses process boundaries (the native module's objects do
not pickle). The core is deterministic, so every executor gives the same
reports for the same tasks. :class:`LocalExecutor` (the default) is a
process pool on this machine; :class:`DaskExecutor` runs on a Dask cluster
(a LocalCluster by default, or any scheduler address, e.g. one started by
dask-jobqueue on SLURM).
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

Task = tuple[str, int]
"""What one run needs: the scenario's TOML text and the seed."""

Outcome = dict[str, Any]
"""What one run gives back (see the module doc)."""

SOURCE = "<sweep>"
"""The scenario source recorded in every sweep run's report, so that a report
depends only on the scenario and the seed (its cache key), not on which
sweep or file asked for it."""


def simulate(scenario: str, seed: int) -> Outcome:
    """Run one scenario in the current process and return plain data."""
    from nicsim import _core

    started = time.perf_counter()
    try:
        report = _core.run_scenario(scenario, SOURCE, seed, None)
    except _core.SimulationError as e:
        return {"status": "failed", "error": str(e), "wall_s": time.perf_counter() - started}
    except Exception as e:  # a scenario error here is a bug upstream: do not cache it
        return {"status": "error", "error": f"{type(e).__name__}: {e}"}
    return {"status": "ok", "report": report, "wall_s": time.perf_counter() - started}


def available_cores() -> int:
    """Cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class Executor(ABC):
    """Runs tasks and yields ``(index, outcome)`` as they finish.

    Closing the iterator early (an interrupt, an exception in the consumer)
    cancels the tasks not yet started. Use as a context manager, or call
    :meth:`close`, to release workers.
    """

    name: str = "executor"

    @property
    @abstractmethod
    def workers(self) -> int:
        """How many runs can go on at once."""

    @abstractmethod
    def map(self, tasks: Sequence[Task]) -> Iterator[tuple[int, Outcome]]:
        """Run ``tasks``; yield each one's index and outcome when it finishes."""

    def close(self) -> None:
        """Release the workers (idempotent)."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def describe(self) -> str:
        """One line for progress output and reports."""
        return f"{self.name}, {self.workers} workers"


def _ignore_sigint() -> None:
    """Pool worker initializer: Ctrl-C is for the parent, which cancels."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class LocalExecutor(Executor):
    """A pool of worker processes on this machine (``spawn``: safe with the
    threads of the parent).

    ``workers`` defaults to every core. Each worker runs one simulation at a
    time; at most ``2 * workers`` tasks are handed out ahead, so an interrupt
    stops quickly. When a worker process dies the pool is restarted and the
    tasks that were in flight are run again, each up to ``retries`` more
    times; then it is an ``error`` outcome.
    """

    name = "local"

    def __init__(self, workers: int | None = None, *, retries: int = 2) -> None:
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self._workers = workers or available_cores()
        self.retries = retries
        self._pool: ProcessPoolExecutor | None = None

    @property
    def workers(self) -> int:
        return self._workers

    def _ensure_pool(self) -> ProcessPoolExecutor:
        if self._pool is None:
            import multiprocessing

            self._pool = ProcessPoolExecutor(
                max_workers=self._workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_ignore_sigint,
            )
        return self._pool

    def start(self) -> None:
        """Start the worker processes now rather than on the first task."""
        pool = self._ensure_pool()
        list(pool.map(int, range(self._workers)))

    def map(self, tasks: Sequence[Task]) -> Iterator[tuple[int, Outcome]]:
        queue = list(range(len(tasks)))
        queue.reverse()  # pop() from the end hands tasks out in order
        attempts = [0] * len(tasks)
        ahead = 2 * self._workers
        in_flight: dict[Future[Outcome], int] = {}
        try:
            while queue or in_flight:
                pool = self._ensure_pool()
                while queue and len(in_flight) < ahead:
                    i = queue.pop()
                    try:
                        fut = pool.submit(simulate, *tasks[i])
                    except BrokenProcessPool:  # broke since the last wait
                        queue.append(i)
                        break
                    attempts[i] += 1
                    in_flight[fut] = i
                if not in_flight:
                    self._discard_pool()
                    continue
                done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                broken = False
                for fut in done:
                    i = in_flight.pop(fut)
                    try:
                        outcome = fut.result()
                    except BrokenProcessPool:
                        broken = True
                        queue.append(i)
                        continue
                    except Exception as e:
                        outcome = {"status": "error", "error": f"{type(e).__name__}: {e}"}
                    yield i, outcome
                if broken:
                    # Every task still in flight went down with the pool.
                    queue.extend(in_flight.values())
                    in_flight.clear()
                    self._discard_pool()
                    for i in sorted(set(queue), reverse=True):
                        if attempts[i] > self.retries:
                            queue.remove(i)
                            yield i, {
                                "status": "error",
                                "error": f"a worker process died on each of {attempts[i]} attempts",
                            }
                    queue.sort(reverse=True)
        finally:
            for fut in in_flight:
                fut.cancel()

    def _discard_pool(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


class DaskExecutor(Executor):
    """Runs on a Dask cluster (needs the ``nicsim[dask]`` extra).

    With no ``scheduler`` it starts a ``LocalCluster`` of ``workers``
    single-threaded worker processes (default: every core); with a scheduler
    address (``tcp://host:8786``) it connects to a running cluster, whose
    workers must have nicsim installed. ``client`` uses an existing
    ``distributed.Client`` instead (e.g. one on a dask-jobqueue
    ``SLURMCluster``). Each task is retried ``retries`` times if it raises;
    a task whose worker dies is rescheduled by Dask itself (up to its
    ``distributed.scheduler.allowed-failures``).
    """

    name = "dask"

    def __init__(
        self,
        scheduler: str | None = None,
        workers: int | None = None,
        *,
        retries: int = 2,
        client: Any = None,
        cluster_kwargs: dict[str, Any] | None = None,
    ) -> None:
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        try:
            import distributed  # noqa: F401
        except ImportError as e:
            raise ImportError(
                "the Dask executor needs dask.distributed: pip install 'nicsim[dask]'"
            ) from e
        self.scheduler = scheduler
        self.retries = retries
        self._n_workers = workers
        self._cluster_kwargs = dict(cluster_kwargs or {})
        self._client = client
        self._owns_client = client is None
        self._cluster: Any = None

    @property
    def client(self) -> Any:
        """The ``distributed.Client`` (started on first use)."""
        if self._client is None:
            from distributed import Client, LocalCluster

            if self.scheduler is not None:
                self._client = Client(self.scheduler)
            else:
                kwargs: dict[str, Any] = {
                    "n_workers": self._n_workers or available_cores(),
                    "threads_per_worker": 1,
                    "processes": True,
                    "dashboard_address": None,
                    "silence_logs": 40,
                }
                kwargs.update(self._cluster_kwargs)
                self._cluster = LocalCluster(**kwargs)
                self._client = Client(self._cluster)
        return self._client

    @property
    def workers(self) -> int:
        if self._client is None and self.scheduler is None:
            return self._n_workers or available_cores()
        return len(self.client.scheduler_info().get("workers", {}))

    def describe(self) -> str:
        where = self.scheduler or "LocalCluster"
        return f"dask ({where}), {self.workers} workers"

    def map(self, tasks: Sequence[Task]) -> Iterator[tuple[int, Outcome]]:
        from distributed import as_completed

        client = self.client
        batch = uuid.uuid4().hex[:12]
        futures = [
            client.submit(
                simulate, text, seed, key=f"nicsim-{batch}-{i}", pure=False, retries=self.retries
            )
            for i, (text, seed) in enumerate(tasks)
        ]
        index = {fut.key: i for i, fut in enumerate(futures)}
        finished: set[int] = set()
        try:
            for fut in as_completed(futures):
                i = index[fut.key]
                if fut.status == "finished":
                    outcome: Outcome = fut.result()
                else:
                    error = fut.exception()
                    outcome = {"status": "error", "error": f"{type(error).__name__}: {error}"}
                finished.add(i)
                fut.release()
                yield i, outcome
        finally:
            left = [f for i, f in enumerate(futures) if i not in finished]
            if left:
                client.cancel(left)

    def close(self) -> None:
        if self._owns_client and self._client is not None:
            self._client.close()
            self._client = None
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None


def make_executor(
    kind: str = "local", workers: int | None = None, scheduler: str | None = None
) -> Executor:
    """An executor by name: ``"local"`` or ``"dask"`` (``scheduler`` implies
    dask)."""
    if scheduler is not None and kind == "local":
        kind = "dask"
    if kind == "local":
        return LocalExecutor(workers)
    if kind == "dask":
        return DaskExecutor(scheduler, workers)
    raise ValueError(f"unknown executor {kind!r}: use 'local' or 'dask'")
