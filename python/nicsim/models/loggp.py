"""LogP and LogGP: the time of one message as latency, overhead and gaps.

LogP: D. Culler, R. Karp, D. Patterson, A. Sahay, K. E. Schauser, E. Santos,
R. Subramonian, T. von Eicken, "LogP: towards a realistic model of parallel
computation", PPoPP 1993. LogGP: A. Alexandrov, M. Ionescu, K. E. Schauser,
C. Scheiman, "LogGP: incorporating long messages into the LogP model",
SPAA 1995.

Parameters: ``L`` the latency of a small message through the network (s),
``o`` the time a processor is busy sending or receiving one (s), ``g`` the
shortest interval between two messages from one processor (s), ``G`` the
gap per byte of a long message (s/B), ``P`` the processors. A k-byte
message takes

    T(k) = o + (k − 1) G + L + o

from the sender starting to the receiver having it. LogGP's assumptions:
the per-byte cost is paid once at the bottleneck stage (the stages
pipeline), ``o`` and ``L`` do not depend on k, there is no contention
(capacity ⌈L/g⌉ messages in flight is not exceeded). NetPIPE's ping-pong
time per block (one way, half the round trip) is T(k).

Sources: the forms above are the published ones as restated in the
LogGP literature and in ``shared/spec/models.md``; the papers' text was not
re-read for this module (the search index holds neither).
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class LogGP:
    """LogGP from explicit parameters (seconds, seconds per byte)."""

    L: float
    """Network latency of a small message, s."""
    o: float
    """Overhead at each end, s."""
    g: float = 0.0
    """Gap between consecutive small messages, s."""
    G: float = 0.0
    """Gap per byte of a long message, s/B."""
    P: int = 2
    """Processors."""

    def __post_init__(self) -> None:
        for name in ("L", "o", "g", "G"):
            value = getattr(self, name)
            if math.isnan(value) or math.isinf(value) or value < 0:
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
        if self.P < 1:
            raise ValueError(f"P must be >= 1, got {self.P!r}")

    def time(self, k: float) -> float:
        """T(k) = o + (k − 1) G + L + o for a k-byte message (k >= 1)."""
        if k < 1:
            raise ValueError(f"a message has at least 1 byte, got {k!r}")
        return 2 * self.o + (k - 1) * self.G + self.L

    def throughput(self, k: float) -> float:
        """k / T(k), bytes per second: NetPIPE's ping-pong throughput."""
        return k / self.time(k)

    def rate(self, k: float) -> float:
        """Back-to-back k-byte messages from one sender: one per
        max(g, o + (k − 1) G) seconds; bytes per second."""
        return k / max(self.g, self.o + (k - 1) * self.G)

    def half_power_size(self) -> float:
        """n½: the message size at which ping-pong reaches half of 1/G
        (2o + L − G) / G; ∞ with G = 0."""
        return math.inf if self.G == 0 else (2 * self.o + self.L - self.G) / self.G
