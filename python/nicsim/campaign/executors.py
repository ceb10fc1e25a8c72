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

Tasks travel in chunks sized from the measured run time (about
:data:`CHUNK_SECONDS` of simulation each, one task at a time at first and
for retries), so that thousands of millisecond-long runs are not dominated
by messaging. Only plain data crosses process boundaries (the native
module's objects do not pickle). The core is deterministic, so every executor gives the same
reports for the same tasks. :class:`LocalExecutor` (the default) is a
process pool on this machine; :class:`DaskExecutor` runs on a Dask cluster
(a LocalCluster by default, or any scheduler address, e.g. one started by
dask-jobqueue on SLURM).
"""

from __future__ import annotations

import math
import os
import signal
import time
import uuid
from abc import ABC, abstractmethod
from collections import deque
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


def simulate_many(tasks: Sequence[Task]) -> list[Outcome]:
    """:func:`simulate` each task of a chunk, in order."""
    return [simulate(text, seed) for text, seed in tasks]


CHUNK_SECONDS = 0.2
"""Simulation time a chunk of tasks aims at: long next to the cost of a
message, short next to a sweep."""

MAX_CHUNK = 256
"""No chunk has more tasks than this."""


def available_cores() -> int:
    """Cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class WorkerLost(Exception):
    """The worker running a chunk died and the backend did not rerun it."""


class _Chunker:
    """Chunk sizes from the mean run time seen so far."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.runs = 0

    def observe(self, outcomes: Sequence[Outcome]) -> None:
        for outcome in outcomes:
            wall = outcome.get("wall_s")
            if isinstance(wall, float):
                self.seconds += wall
                self.runs += 1

    def size(self, remaining: int, workers: int) -> int:
        """Tasks in the next chunk: one until a run has been timed, and never
        so many that the last chunks leave workers idle."""
        if self.runs == 0:
            return 1
        mean = max(self.seconds / self.runs, 1e-6)
        tail = math.ceil(remaining / (2 * max(workers, 1)))
        return max(1, min(round(CHUNK_SECONDS / mean), MAX_CHUNK, tail))


class Executor(ABC):
    """Runs tasks and yields ``(index, outcome)`` as they finish.

    Subclasses provide the backend (submit a chunk, wait, collect); this
    class does the chunking, the retries after a lost worker and the
    cancelling. Closing the iterator early (an interrupt, an exception in
    the consumer) cancels the chunks in flight. Use as a context manager,
    or call :meth:`close`, to release workers.
    """

    name: str = "executor"
    retries: int = 2

    @property
    @abstractmethod
    def workers(self) -> int:
        """How many runs can go on at once."""

    @abstractmethod
    def _submit(self, chunk: list[Task]) -> Any:
        """Start :func:`simulate_many` on ``chunk``; return a handle (raise
        :class:`WorkerLost` if the backend is broken)."""

    @abstractmethod
    def _wait(self, handles: list[Any]) -> list[Any]:
        """Block until at least one handle is done; return the done ones."""

    @abstractmethod
    def _collect(self, handle: Any) -> list[Outcome]:
        """The outcomes of a done chunk; :class:`WorkerLost` if its worker
        died, any other exception if it failed."""

    def _cancel(self, handles: list[Any]) -> None:
        """Cancel chunks not yet done."""

    def _reset(self) -> None:
        """Recover after :class:`WorkerLost` (restart a pool)."""

    def map(self, tasks: Sequence[Task]) -> Iterator[tuple[int, Outcome]]:
        """Run ``tasks``; yield each one's index and outcome when it finishes."""
        queue = deque(range(len(tasks)))
        attempts = [0] * len(tasks)
        chunker = _Chunker()
        in_flight: dict[Any, list[int]] = {}
        try:
            while queue or in_flight:
                workers = self.workers
                while queue and len(in_flight) < 2 * max(workers, 1):
                    # A retried task goes alone: it may be what killed a worker.
                    size = 1 if attempts[queue[0]] else chunker.size(len(queue), workers)
                    chunk = [queue.popleft() for _ in range(min(size, len(queue)))]
                    try:
                        handle = self._submit([tasks[i] for i in chunk])
                    except WorkerLost:
                        queue.extendleft(reversed(chunk))
                        break
                    for i in chunk:
                        attempts[i] += 1
                    in_flight[handle] = chunk
                if not in_flight:
                    self._reset()
                    continue
                lost = False
                for handle in self._wait(list(in_flight)):
                    chunk = in_flight.pop(handle)
                    try:
                        outcomes = self._collect(handle)
                    except WorkerLost:
                        lost = True
                        queue.extend(chunk)
                        continue
                    except Exception as e:
                        outcomes = [{"status": "error", "error": f"{type(e).__name__}: {e}"}] * len(
                            chunk
                        )
                    chunker.observe(outcomes)
                    for i, outcome in zip(chunk, outcomes):
                        yield i, outcome
                if lost:  # everything in flight went down with the worker
                    for chunk in in_flight.values():
                        queue.extend(chunk)
                    in_flight.clear()
                    self._reset()
                    for i in [i for i in queue if attempts[i] > self.retries]:
                        queue.remove(i)
                        yield (
                            i,
                            {
                                "status": "error",
                                "error": f"a worker process died on each of {attempts[i]} attempts",
                            },
                        )
        finally:
            if in_flight:
                self._cancel(list(in_flight))

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

    ``workers`` defaults to every core. At most two chunks per worker are
    handed out ahead, so an interrupt stops quickly. When a worker process
    dies the pool is restarted and the tasks that were in flight run again,
    each up to ``retries`` more times; then it is an ``error`` outcome.
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

    def _submit(self, chunk: list[Task]) -> Future[list[Outcome]]:
        try:
            return self._ensure_pool().submit(simulate_many, chunk)
        except BrokenProcessPool as e:
            raise WorkerLost from e

    def _wait(self, handles: list[Any]) -> list[Any]:
        done, _ = wait(handles, return_when=FIRST_COMPLETED)
        return list(done)

    def _collect(self, handle: Any) -> list[Outcome]:
        try:
            outcomes: list[Outcome] = handle.result()
        except BrokenProcessPool as e:
            raise WorkerLost from e
        return outcomes

    def _cancel(self, handles: list[Any]) -> None:
        for fut in handles:
            fut.cancel()

    def _reset(self) -> None:
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
    ``SLURMCluster``). A chunk whose worker dies is rescheduled by Dask
    itself (up to its ``distributed.scheduler.allowed-failures``); one that
    raises is retried ``retries`` times.
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
        self._batch = uuid.uuid4().hex[:12]
        self._chunks = 0

    @property
    def client(self) -> Any:
        """The ``distributed.Client`` (started on first use)."""
        if self._client is None:
            from distributed import Client, LocalCluster

            if self.scheduler is not None:
                self._client = Client(self.scheduler)  # type: ignore[no-untyped-call]
            else:
                kwargs: dict[str, Any] = {
                    "n_workers": self._n_workers or available_cores(),
                    "threads_per_worker": 1,
                    "processes": True,
                    "dashboard_address": None,
                    "silence_logs": 40,
                }
                kwargs.update(self._cluster_kwargs)
                self._cluster = LocalCluster(**kwargs)  # type: ignore[no-untyped-call]
                self._client = Client(self._cluster)  # type: ignore[no-untyped-call]
        return self._client

    @property
    def workers(self) -> int:
        if self._client is None and self.scheduler is None:
            return self._n_workers or available_cores()
        return sum(self.client.nthreads().values())

    def describe(self) -> str:
        where = self.scheduler or "LocalCluster"
        return f"dask ({where}), {self.workers} workers"

    def _submit(self, chunk: list[Task]) -> Any:
        self._chunks += 1
        key = f"nicsim-{self._batch}-{self._chunks}"
        return self.client.submit(simulate_many, chunk, key=key, pure=False, retries=self.retries)

    def _wait(self, handles: list[Any]) -> list[Any]:
        from distributed import wait as dask_wait

        done, _ = dask_wait(handles, return_when="FIRST_COMPLETED")  # type: ignore[no-untyped-call]
        return list(done)

    def _collect(self, handle: Any) -> list[Outcome]:
        try:
            outcomes: list[Outcome] = handle.result()
        finally:
            handle.release()
        return outcomes

    def _cancel(self, handles: list[Any]) -> None:
        self.client.cancel(handles)

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
