"""Golden results for refactoring: snapshot every scenario's output files and
every study's CSVs, then compare a later build against the snapshot byte for
byte (issue #24: a change that moves a result is a modelling change and gets
its own commit).

    .venv/bin/python scripts/golden.py snapshot DIR   # before the change
    .venv/bin/python scripts/golden.py compare DIR    # after each step

Each top-level scenario and each bench scenario runs with `nicsim run`; each
sweep file runs with `nicsim sweep` and is exported to CSV; every study runs
with `nicsim reproduce all` into a fresh results root. Only deterministic
outputs are compared: the run cache's and sweep tables' `wall_s` (how
long a run took on this machine) is set aside.
"""

from __future__ import annotations

import csv
import filecmp
import json
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NICSIM = str(ROOT / ".venv" / "bin" / "nicsim")
WORKERS = 2


def _jobs(out: Path) -> list[list[str]]:
    jobs = []
    scenarios = sorted(ROOT.glob("scenarios/*.toml")) + sorted(
        ROOT.glob("scenarios/kurmann/*.toml")
    ) + sorted(ROOT.glob("scenarios/bench/*.toml"))
    for s in scenarios:
        dest = out / "runs" / s.relative_to(ROOT / "scenarios").with_suffix("")
        jobs.append([NICSIM, "run", str(s), "--out", str(dest)])
    for s in sorted(ROOT.glob("scenarios/sweeps/*.toml")):
        res = out / "sweeps-cache" / s.stem
        csv = out / "sweeps" / f"{s.stem}.csv"
        jobs.append(
            [
                "sh",
                "-c",
                f"{NICSIM} sweep {s} --workers 1 --no-progress --results {res} "
                f"&& mkdir -p {csv.parent} && {NICSIM} export {s} {csv} --results {res}",
            ]
        )
    jobs.append(
        [
            NICSIM,
            "reproduce",
            "all",
            "--workers",
            "1",
            "--no-progress",
            "--results",
            str(out / "reproductions"),
        ]
    )
    return jobs


def _run(cmd: list[str]) -> tuple[list[str], int, str]:
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    return cmd, p.returncode, p.stderr[-2000:]


def _kept(out: Path) -> list[Path]:
    files = [p for p in out.rglob("*") if p.is_file()]
    keep = []
    for p in files:
        rel = p.relative_to(out)
        if rel.parts[0] == "sweeps-cache":
            continue
        if p.suffix in (".json", ".csv"):
            keep.append(rel)
    return sorted(keep)


def snapshot(out: Path) -> int:
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    failed = 0
    with ThreadPoolExecutor(WORKERS) as pool:
        for cmd, rc, err in pool.map(_run, _jobs(out)):
            if rc != 0:
                failed += 1
                print(f"FAILED: {' '.join(cmd)}\n{err}", file=sys.stderr)
    shutil.rmtree(out / "sweeps-cache", ignore_errors=True)
    # the reproductions' run cache holds per-run metadata; keep only CSVs and
    # result.json files, which are the results
    print(f"{len(_kept(out))} files in {out}")
    return 1 if failed else 0


def _same(a: Path, b: Path) -> bool:
    """Byte-identical, once the wall-clock time of each run (`wall_s` in the
    run cache and in sweep tables) is set aside: it is the only field that
    is not a result."""
    if filecmp.cmp(a, b, shallow=False):
        return True
    if a.suffix == ".json":
        ja, jb = json.loads(a.read_text()), json.loads(b.read_text())
        if isinstance(ja, dict) and isinstance(jb, dict):
            ja.pop("wall_s", None)
            jb.pop("wall_s", None)
        return ja == jb and a.read_text().count("\n") == b.read_text().count("\n")
    if a.suffix == ".csv":
        ra, rb = list(csv.reader(a.open())), list(csv.reader(b.open()))
        if not ra or not rb or ra[0] != rb[0] or "wall_s" not in ra[0]:
            return False
        i = ra[0].index("wall_s")
        strip = lambda rows: [r[:i] + r[i + 1 :] for r in rows]  # noqa: E731
        return strip(ra) == strip(rb)
    return False


def compare(golden: Path) -> int:
    with tempfile.TemporaryDirectory(prefix="nicsim-golden-") as tmp:
        now = Path(tmp)
        if snapshot(now):
            return 1
        want, got = _kept(golden), _kept(now)
        missing = sorted(set(want) - set(got))
        extra = sorted(set(got) - set(want))
        differ = [
            p
            for p in sorted(set(want) & set(got))
            if not _same(golden / p, now / p)
        ]
        for p in missing:
            print(f"missing: {p}")
        for p in extra:
            print(f"new: {p}")
        for p in differ:
            print(f"differs: {p}")
        print(
            f"{len(want)} golden files: {len(differ)} differ, "
            f"{len(missing)} missing, {len(extra)} new"
        )
        return 1 if (differ or missing) else 0


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("snapshot", "compare"):
        print(__doc__)
        sys.exit(2)
    fn = snapshot if sys.argv[1] == "snapshot" else compare
    sys.exit(fn(Path(sys.argv[2]).resolve()))
