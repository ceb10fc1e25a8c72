"""Analytical models of protocol offload and messaging, and their
confrontation with simulation.

* :mod:`~nicsim.models.laws`    LAWS (Shivam and Chase, 2003): stream throughput before and after offload.
* :mod:`~nicsim.models.emo`     EMO (Gilfeather and Maccabe, 2005): per-message latency, overhead, gap.
* :mod:`~nicsim.models.loggp`   LogP / LogGP: T(k) = o + (k − 1)G + L + o.
* :mod:`~nicsim.models.extract` their parameters from a run's probes.
* :mod:`nicsim.studies.ortiz.analytical` prediction against simulation on sweeps of the Ortiz machine, with figures and a report (``nicsim models compare``).

See docs/models/analytical.md.
"""

from .emo import Emo
from .laws import Laws, LawsRatios
from .loggp import LogGP

__all__ = ["Emo", "Laws", "LawsRatios", "LogGP"]
