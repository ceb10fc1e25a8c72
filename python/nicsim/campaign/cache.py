"""The result cache: one JSON file per run, keyed by content, plus an index.

Layout of a results directory::

    results_dir/
      runs/ab/ab12...ef.json   one run: key, version, seed, status, the resolved
                               scenario and the core's report (source of truth)
      sweeps/<name>.json       one sweep's manifest: its knobs and, per point,
                               the parameters, replica, seed and run key
      index.sqlite             SQLite (WAL) index of both, rebuildable from them

A run's key is the SHA-256 of the canonical resolved scenario (every default
filled in, every unit canonical, so ``"1000Mbps"`` and ``"1Gbps"`` are one
key), the seed and the nicsim version: any change that can change a result
changes the key, and nothing else does. Files are written to a temporary
name and renamed into place, so a file is either complete or absent; a run
is done exactly when its file exists. A crash or an interrupt at any moment
leaves a cache that the next run reads as it is and completes: the index is
reconciled with the files (:meth:`Cache.sync`) before each sweep.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import signal
import sqlite3
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from nicsim.result import Result

FORMAT = 1
"""Version of the run and manifest file layout."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    key TEXT PRIMARY KEY,
    version TEXT NOT NULL,
    seed TEXT NOT NULL,
    status TEXT NOT NULL,
    error TEXT,
    wall_s REAL,
    scenario_name TEXT,
    workload TEXT,
    summary TEXT
);
CREATE TABLE IF NOT EXISTS sweeps (
    name TEXT PRIMARY KEY,
    manifest TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS points (
    sweep TEXT NOT NULL,
    idx INTEGER NOT NULL,
    key TEXT NOT NULL,
    params TEXT NOT NULL,
    replica INTEGER NOT NULL,
    seed TEXT NOT NULL,
    PRIMARY KEY (sweep, idx)
);
CREATE INDEX IF NOT EXISTS points_key ON points (key);
"""

SUMMARY_FIRST = ["goodput_bps", "duration_s", "payload_bytes", "frames", "retransmissions"]
"""Summary columns shown first in tables (the rest follow in report order)."""


@functools.cache
def native_build() -> str:
    """SHA-256 of the native module's file: what identifies the simulator's
    code, which changes in a rebuild while the version stays the same."""
    from .. import _core

    return hashlib.sha256(Path(_core.__file__).read_bytes()).hexdigest()


def run_key(
    resolved: Mapping[str, Any],
    seed: int,
    version: str,
    profile_text: Callable[[str], str | None] | None = None,
    build: str | None = None,
) -> str:
    """The cache key of a run: SHA-256 of the canonical resolved scenario,
    the seed, the nicsim version, the native module's build (``build``,
    default ``native_build()``) and the text of every built-in timing
    profile its hosts name (``profile_text``, default the native module's):
    a rebuild with the same version, of the code or of a profile, must not
    reuse an older run."""
    names = sorted({h["profile"] for h in resolved.get("hosts", []) if isinstance(h, Mapping) and h.get("profile")})
    payload: dict[str, Any] = {
        "scenario": resolved,
        "seed": seed,
        "version": version,
        "build": native_build() if build is None else build,
    }
    if names:
        if profile_text is None:
            from .. import _core

            profile_text = _core.profile_text
        payload["profiles"] = {name: profile_text(name) for name in names}
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def safe_name(name: str) -> str:
    """A sweep name made safe as a file or directory name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "sweep"


@contextmanager
def _interrupts_deferred() -> Iterator[None]:
    """Hold back SIGINT (Ctrl-C) for the duration: a Ctrl-C that arrives
    meanwhile is handed to the previous handler (by default it raises
    ``KeyboardInterrupt``) when the block ends. Python runs signal handlers
    between bytecodes, so without this an interrupt can land between
    creating a temporary file and the ``try`` that would remove it. Only
    the main thread can install handlers; elsewhere nothing is held back."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[tuple[int, Any]] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append((signum, frame)))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught and callable(previous):
        previous(*caught[0])
    elif caught and previous == signal.SIG_DFL:
        raise KeyboardInterrupt


def write_atomic(path: Path, text: str, *, durable: bool = False) -> None:
    """Write ``text`` to ``path`` so that readers see the old file or the
    whole new one, never a part: a temporary file in the same directory
    (which must exist), flushed to disk if ``durable``, then renamed over
    ``path``. A Ctrl-C during the write takes effect after it, so it never
    leaves the temporary file behind."""
    with _interrupts_deferred():
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
                if durable:
                    f.flush()
                    os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise


class Cache:
    """A results directory: run files, sweep manifests and their index.

    Writes are atomic (a temporary file renamed into place), which is all a
    process crash or an interrupt needs. ``durable`` also flushes each file
    to the disk before it counts (fsync, about 4 ms a file on this machine's
    ext4), against power loss; without it, a file that a power loss left
    empty or cut is found by :meth:`sync` or :meth:`verify` and run again.
    """

    def __init__(self, results_dir: str | os.PathLike[str], *, durable: bool = False) -> None:
        self.dir = Path(results_dir)
        self.durable = durable
        self.runs_dir = self.dir / "runs"
        self.sweeps_dir = self.dir / "sweeps"
        self.runs_dir.mkdir(parents=True, exist_ok=True)
        self.sweeps_dir.mkdir(parents=True, exist_ok=True)
        self._shards: set[str] = set()
        self.index_path = self.dir / "index.sqlite"
        self._db = sqlite3.connect(self.index_path, timeout=60)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(SCHEMA)
        self._db.commit()

    def close(self) -> None:
        """Close the index."""
        self._db.close()

    def __enter__(self) -> Cache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- runs -------------------------------------------------------------

    def path(self, key: str) -> Path:
        """Where the run with ``key`` is stored."""
        return self.runs_dir / key[:2] / f"{key}.json"

    def has(self, key: str) -> bool:
        """Whether the run with ``key`` is done (its file exists)."""
        return self.path(key).is_file()

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored run record, or ``None`` if it is not there (or its
        file is unreadable, which the next sweep then recomputes)."""
        try:
            record: dict[str, Any] = json.loads(self.path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return record if record.get("key") == key else None

    def result(self, key: str) -> Result | None:
        """The stored run as a :class:`nicsim.Result`, or ``None`` if it is
        not there or failed."""
        from nicsim.result import Result

        record = self.get(key)
        if record is None or record.get("report") is None:
            return None
        return Result(json.dumps(record["report"]))

    def put(self, record: Mapping[str, Any]) -> Path:
        """Store one run record (its ``key`` names it): the file first, then
        the index row."""
        path = self.path(record["key"])
        if path.parent.name not in self._shards:
            path.parent.mkdir(exist_ok=True)
            self._shards.add(path.parent.name)
        write_atomic(path, json.dumps(record, ensure_ascii=False), durable=self.durable)
        with self._db:
            self._index_run(record)
        return path

    def _index_run(self, record: Mapping[str, Any]) -> None:
        report = record.get("report") or {}
        summary = report.get("summary")
        scenario = report.get("scenario") or {}
        workload = report.get("workload") or {}
        self._db.execute(
            "INSERT OR REPLACE INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                record["key"],
                record.get("nicsim_version"),
                str(record.get("seed")),
                record.get("status"),
                record.get("error"),
                record.get("wall_s"),
                scenario.get("name") or (record.get("scenario") or {}).get("name"),
                workload.get("kind"),
                None if summary is None else json.dumps(summary),
            ),
        )

    def sync(self, keys: Iterable[str]) -> set[str]:
        """Reconcile the index with the run files for ``keys`` and return the
        keys that are done. A file without an index row (an interrupt between
        the two writes) is indexed; a row without a file is dropped; a file
        that cannot be read is removed so the run is done again."""
        indexed = {k for (k,) in self._db.execute("SELECT key FROM runs")}
        done: set[str] = set()
        with self._db:
            for key in set(keys):
                path = self.path(key)
                try:
                    size = path.stat().st_size
                except OSError:
                    size = None
                if size == 0:  # left empty by a power loss without fsync
                    path.unlink(missing_ok=True)
                    size = None
                if size is not None:
                    if key not in indexed:
                        record = self.get(key)
                        if record is None:
                            path.unlink(missing_ok=True)
                            continue
                        self._index_run(record)
                    done.add(key)
                elif key in indexed:
                    self._db.execute("DELETE FROM runs WHERE key = ?", (key,))
        return done

    def verify(self) -> list[str]:
        """Read every run file; remove those that cannot be read (and their
        index rows) so the next sweep runs them again. Returns their keys."""
        broken = []
        with self._db:
            for path in sorted(self.runs_dir.glob("*/*.json")):
                if self.get(path.stem) is None:
                    path.unlink(missing_ok=True)
                    self._db.execute("DELETE FROM runs WHERE key = ?", (path.stem,))
                    broken.append(path.stem)
        return broken

    def statuses(self, keys: Iterable[str]) -> dict[str, str]:
        """The indexed status (``ok`` or ``failed``) of each of ``keys`` that
        has one; call :meth:`sync` first to trust it."""
        wanted = set(keys)
        return {k: s for k, s in self._db.execute("SELECT key, status FROM runs") if k in wanted}

    def rebuild_index(self) -> int:
        """Rebuild the index from the files alone; returns the runs indexed.
        Also removes temporary files an interrupted write left behind."""
        for tmp in list(self.runs_dir.glob("*/.tmp-*")) + list(self.sweeps_dir.glob(".tmp-*")):
            tmp.unlink(missing_ok=True)
        count = 0
        with self._db:
            self._db.execute("DELETE FROM runs")
            self._db.execute("DELETE FROM points")
            self._db.execute("DELETE FROM sweeps")
            for path in sorted(self.runs_dir.glob("*/*.json")):
                record = self.get(path.stem)
                if record is None:
                    continue
                self._index_run(record)
                count += 1
            for path in sorted(self.sweeps_dir.glob("*.json")):
                try:
                    manifest = json.loads(path.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    continue
                self._index_sweep(manifest)
        return count

    # -- sweeps -----------------------------------------------------------

    def record_sweep(self, manifest: Mapping[str, Any]) -> None:
        """Store a sweep's manifest (name, knobs, points), replacing an older
        one of the same name."""
        path = self.sweeps_dir / f"{safe_name(manifest['name'])}.json"
        write_atomic(path, json.dumps(manifest, indent=1, ensure_ascii=False), durable=self.durable)
        with self._db:
            self._index_sweep(manifest)

    def _index_sweep(self, manifest: Mapping[str, Any]) -> None:
        name = manifest["name"]
        head = {k: v for k, v in manifest.items() if k != "points"}
        self._db.execute("INSERT OR REPLACE INTO sweeps VALUES (?, ?)", (name, json.dumps(head)))
        self._db.execute("DELETE FROM points WHERE sweep = ?", (name,))
        self._db.executemany(
            "INSERT INTO points VALUES (?, ?, ?, ?, ?, ?)",
            [
                (name, i, p["key"], json.dumps(p["params"]), p["replica"], str(p["seed"]))
                for i, p in enumerate(manifest.get("points") or [])
            ],
        )

    def sweeps(self) -> list[str]:
        """Names of the sweeps recorded here."""
        return [n for (n,) in self._db.execute("SELECT name FROM sweeps ORDER BY name")]

    def manifest(self, sweep: str) -> dict[str, Any]:
        """A sweep's manifest without its points (name, description, knobs,
        base, ...)."""
        row = self._db.execute("SELECT manifest FROM sweeps WHERE name = ?", (sweep,)).fetchone()
        if row is None:
            raise KeyError(f"no sweep named {sweep!r} in {self.dir}")
        head: dict[str, Any] = json.loads(row[0])
        return head

    def status(self, sweep: str | None = None) -> dict[str, int]:
        """Counts of points by status: ``ok``, ``failed``, ``missing``, and
        ``total``; over every sweep when ``sweep`` is ``None``."""
        where, args = ("WHERE p.sweep = ?", (sweep,)) if sweep is not None else ("", ())
        rows = self._db.execute(
            "SELECT COALESCE(r.status, 'missing'), COUNT(*) FROM points p "
            f"LEFT JOIN runs r ON r.key = p.key {where} GROUP BY 1",
            args,
        ).fetchall()
        counts = {"ok": 0, "failed": 0, "missing": 0}
        counts.update({status: n for status, n in rows})
        counts["total"] = sum(n for _, n in rows)
        return counts

    # -- tables -----------------------------------------------------------

    def to_pandas(self, sweep: str | None = None) -> pd.DataFrame:
        """One row per sweep point: ``sweep``, ``point``, one column per
        knob (named by its path), ``replica``, ``seed``, ``key``,
        ``nicsim_version``, ``status`` (``ok``, ``failed`` or ``missing``),
        ``error``, ``wall_s``, then the report's summary fields. Every sweep
        in the directory when ``sweep`` is ``None``; a directory without
        sweeps gives one row per stored run."""
        names = self.sweeps() if sweep is None else [sweep]
        if sweep is not None and sweep not in self.sweeps():
            raise KeyError(f"no sweep named {sweep!r} in {self.dir}")
        if not names:
            return self._runs_frame()
        knobs: list[str] = []
        rows: list[dict[str, Any]] = []
        for name in names:
            for knob in self.manifest(name).get("knobs") or []:
                if knob not in knobs:
                    knobs.append(knob)
            query = (
                "SELECT p.idx, p.params, p.replica, p.seed, p.key, r.version, r.status, "
                "r.error, r.wall_s, r.summary FROM points p LEFT JOIN runs r ON r.key = p.key "
                "WHERE p.sweep = ? ORDER BY p.idx"
            )
            for (
                idx,
                params,
                replica,
                seed,
                key,
                version,
                status,
                error,
                wall_s,
                summary,
            ) in self._db.execute(query, (name,)):
                row: dict[str, Any] = {"sweep": name, "point": idx}
                row.update(json.loads(params))
                row.update(
                    replica=replica,
                    seed=int(seed),
                    key=key,
                    nicsim_version=version,
                    status=status or "missing",
                    error=error,
                    wall_s=wall_s,
                )
                row.update(json.loads(summary) if summary else {})
                rows.append(row)
        fixed = ["sweep", "point", *knobs, "replica", "seed", "key"]
        fixed += ["nicsim_version", "status", "error", "wall_s"]
        return _frame(rows, fixed)

    def _runs_frame(self) -> pd.DataFrame:
        rows = []
        for key, version, seed, status, error, wall_s, name, workload, summary in self._db.execute(
            "SELECT * FROM runs ORDER BY key"
        ):
            row: dict[str, Any] = {
                "key": key,
                "scenario": name,
                "workload": workload,
                "seed": int(seed),
                "nicsim_version": version,
                "status": status,
                "error": error,
                "wall_s": wall_s,
            }
            row.update(json.loads(summary) if summary else {})
            rows.append(row)
        return _frame(rows, ["key", "scenario", "workload", "seed", "nicsim_version"])

    def export(self, path: str | os.PathLike[str], sweep: str | None = None) -> Path:
        """Write :meth:`to_pandas` to ``path``: CSV for ``.csv``, Parquet for
        ``.parquet`` or ``.pq``."""
        out = Path(path)
        frame = self.to_pandas(sweep)
        suffix = out.suffix.lower()
        if suffix not in (".csv", ".parquet", ".pq"):
            raise ValueError(f"cannot tell the format of {out}: name it .csv or .parquet")
        out.parent.mkdir(parents=True, exist_ok=True)
        if suffix == ".csv":
            frame.to_csv(out, index=False)
        else:
            frame.to_parquet(out, index=False)
        return out


def _frame(rows: list[dict[str, Any]], first: list[str]) -> pd.DataFrame:
    """Rows as a DataFrame with ``first`` columns leading, then the
    well-known summary columns, then the rest in order of appearance."""
    import pandas as pd

    columns: list[str] = []
    for name in first + SUMMARY_FIRST:
        if name not in columns and (name in first or any(name in r for r in rows)):
            columns.append(name)
    for row in rows:
        for name in row:
            if name not in columns:
                columns.append(name)
    return pd.DataFrame(rows, columns=columns)
