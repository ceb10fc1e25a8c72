"""Experiment campaigns: sweeps over scenario knobs, a content-addressed
result cache, local and Dask executors, and reports.

    sweep = Sweep.from_file("scenarios/sweeps/rate-mtu.toml")
    frame = sweep.run()                       # only the missing points run
    frame = sweep.run(DaskExecutor(workers=4))

See docs/campaigns.md.
"""

from .cache import Cache, run_key
from .executors import DaskExecutor, Executor, LocalExecutor, make_executor, simulate
from .expr import Constraint, ConstraintError
from .knobs import KnobError
from .reproduction import Reproduction
from .run import RunStats, run_missing
from .sweep import Point, Sweep, SweepError

__all__ = [
    "Cache",
    "Constraint",
    "ConstraintError",
    "DaskExecutor",
    "Executor",
    "KnobError",
    "LocalExecutor",
    "Point",
    "Reproduction",
    "RunStats",
    "Sweep",
    "SweepError",
    "make_executor",
    "run_key",
    "run_missing",
    "simulate",
]
