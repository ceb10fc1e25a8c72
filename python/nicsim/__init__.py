"""nicsim: a fast discrete-event simulator of networked hosts and their NICs.

The public surface is small: :func:`run` a scenario, :func:`resolve` one to
see every default filled in, and read the :class:`Result`; :func:`profiles`
lists the built-in host timing profiles, and ``run(..., probes=...)`` feeds
named events (:data:`PROBE_EVENTS`) to Python callables. Scenario problems
raise :class:`ScenarioError` (a ``ValueError`` with ``path`` and ``reason``);
a run that fails raises :class:`SimulationError` (a ``RuntimeError``).
:mod:`nicsim.plots` draws the figures (NetPIPE's graphs, cycles by layer);
:mod:`nicsim.netperf` runs netperf's tests (``netperf.run("TCP_RR")``).
"""

from . import _core, netperf, plots
from ._core import PROBE_EVENTS, ProbeEvent, ScenarioError, SimulationError
from .api import profiles, resolve, run
from .campaign import Sweep
from .result import Result

__version__: str = _core.version()

__all__ = [
    "PROBE_EVENTS",
    "ProbeEvent",
    "Result",
    "ScenarioError",
    "SimulationError",
    "Sweep",
    "__version__",
    "netperf",
    "plots",
    "profiles",
    "resolve",
    "run",
]
