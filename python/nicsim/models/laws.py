"""LAWS: the throughput model of protocol offload by Shivam and Chase.

P. Shivam, J. S. Chase, "On the elusive benefits of protocol offload",
ACM SIGCOMM Workshop on Network-I/O Convergence (NICELI '03), 2003.

What it models: a stream whose throughput is limited by the wire or by
processing, never by latency. Per unit of data moved the host does ``a``
units of application work and ``o`` units of communication work, each unit
taking ``X`` seconds on the host; offload moves a fraction ``p`` of ``o`` to
the NIC, where it becomes ``p·β·o`` units taking ``Y`` seconds each; the
wire carries ``B`` units per second. Every stage is a pipeline stage that
can run at full speed in parallel with the others, so throughput is the
slowest stage's rate:

    T_before = min(B, 1 / ((a + o) X))
    T_after  = min(B, 1 / ((a + (1 − p) o) X), 1 / (p β o Y))

Four ratios (the names the Ortiz study quotes; ``docs/models/analytical.md``):

* lag ratio          α = Y / X        (NIC slower than host: α > 1)
* application ratio  γ = a / o
* wire ratio         σ = (1 / (o X)) / B   (host saturation rate over wire rate)
* structural ratio   β = offloaded overhead / the overhead it replaces

With full offload (p = 1), normalised to B:

    T_before / B = min(1, σ / (1 + γ))
    T_after  / B = min(1, σ / γ, σ / (α β))

Improvement δ = T_after / T_before − 1 is at most 1/γ; offload can help
only if the host was the bottleneck (σ < 1 + γ) and never helps once the NIC
saturates first (α β > 1 + γ); it strictly hurts when α β > max(σ, 1 + γ).

Units: any consistent ones. This module takes ``X`` and ``Y`` in seconds per
unit of work, ``a`` and ``o`` in units of work per byte, ``B`` in bytes per
second, and returns bytes per second; the ratio form is dimensionless.

Sources and what could not be verified: the paper's abstract and
introduction (readable at paperzz.com, doc 7091424, and on the NICELI '03
programme page) confirm the model is built on "four key ratios that capture
the CPU-intensity of the application and the relative speeds of the host,
NIC device, and network path", that offload can eliminate overhead rather
than only shift it (β < 1), and that it applies to throughput-limited, not
latency-limited, transfers. Its formulas were not readable there; the forms
above are those of ``shared/spec/models.md``, written from the ratio
definitions the Ortiz study quotes, and were re-derived here (the bound and
the conditions follow from the two min() expressions; see the tests). The
brief cites the paper as HotOS 2003; its venue is the NICELI workshop at
SIGCOMM 2003 (HotOS IX that year carried Mogul's "TCP offload is a dumb
idea whose time has come"). The symbols follow the Ortiz study: α is the
lag ratio and γ the application ratio; whether the paper's own text uses
the same Greek letters could not be checked.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


def _positive(name: str, value: float, *, allow_zero: bool = False, allow_inf: bool = False) -> None:
    if math.isnan(value) or value < 0 or (value == 0 and not allow_zero) or (math.isinf(value) and not allow_inf):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be a finite number {bound}, got {value!r}")


@dataclass(frozen=True)
class LawsRatios:
    """The four LAWS ratios (dimensionless) and the offloaded fraction ``p``."""

    alpha: float
    """Lag ratio Y / X: time per unit of work on the NIC over the host's."""
    gamma: float
    """Application ratio a / o."""
    sigma: float
    """Wire ratio: the host's saturation rate for communication alone, 1/(oX), over B."""
    beta: float = 1.0
    """Structural ratio: work on the NIC per unit of host overhead it replaces."""
    p: float = 1.0
    """Fraction of the host's communication overhead that is offloaded."""

    def __post_init__(self) -> None:
        _positive("alpha", self.alpha)
        _positive("gamma", self.gamma, allow_zero=True)
        _positive("sigma", self.sigma, allow_inf=True)
        _positive("beta", self.beta)
        if not 0 <= self.p <= 1:
            raise ValueError(f"p must be within [0, 1], got {self.p!r}")

    def before(self) -> float:
        """Throughput without offload over B: min(1, σ / (1 + γ))."""
        return min(1.0, self.sigma / (1 + self.gamma))

    def after(self) -> float:
        """Throughput with offload over B: min(1, σ / (γ + 1 − p), σ / (p α β))
        (for p = 1: min(1, σ/γ, σ/(αβ)))."""
        host_work = self.gamma + 1 - self.p
        host = math.inf if host_work == 0 else self.sigma / host_work
        nic_work = self.p * self.alpha * self.beta
        nic = math.inf if nic_work == 0 else self.sigma / nic_work
        return min(1.0, host, nic)

    def improvement(self) -> float:
        """δ = T_after / T_before − 1."""
        return self.after() / self.before() - 1

    def bound(self) -> float:
        """The largest improvement offload can give: 1/γ (∞ for γ = 0).
        Holds for any α, β, σ and p."""
        return math.inf if self.gamma == 0 else 1 / self.gamma

    def host_bound(self) -> bool:
        """σ < 1 + γ: without offload the host, not the wire, limits throughput
        (the necessary condition for offload to help)."""
        return self.sigma < 1 + self.gamma

    def nic_saturates_first(self) -> bool:
        """α β > 1 + γ (the spec's hurt condition): the NIC, doing the
        offloaded work, is slower than the host was doing all of it, so
        offload cannot help; it strictly hurts when the host was the
        bottleneck (σ ≤ α β). For p < 1 the NIC's share is p α β."""
        return self.p * self.alpha * self.beta > 1 + self.gamma

    def helps(self) -> bool:
        """Offload raises throughput (δ > 0)."""
        return self.after() > self.before() * (1 + 1e-12)

    def hurts(self) -> bool:
        """Offload lowers throughput (δ < 0)."""
        return self.after() < self.before() * (1 - 1e-12)

    def bottleneck_before(self) -> str:
        """``wire`` or ``host``."""
        return "wire" if self.sigma >= 1 + self.gamma else "host"

    def bottleneck_after(self) -> str:
        """``wire``, ``host`` or ``nic``: the stage that sets T_after."""
        t = self.after()
        host_work = self.gamma + 1 - self.p
        if host_work > 0 and math.isclose(t, self.sigma / host_work, rel_tol=1e-12) and t < 1:
            return "host"
        nic_work = self.p * self.alpha * self.beta
        if nic_work > 0 and math.isclose(t, self.sigma / nic_work, rel_tol=1e-12) and t < 1:
            return "nic"
        return "wire"


@dataclass(frozen=True)
class Laws:
    """LAWS from explicit parameters, per byte of data moved."""

    a: float
    """Application work per byte (units of work, e.g. host cycles)."""
    o: float
    """Host communication overhead per byte without offload (units of work)."""
    X: float
    """Host seconds per unit of work (1 / clock for cycles)."""
    Y: float
    """NIC seconds per unit of work."""
    B: float
    """Wire bandwidth, bytes per second of payload."""
    p: float = 1.0
    """Fraction of ``o`` offloaded."""
    beta: float = 1.0
    """Structural ratio."""

    def __post_init__(self) -> None:
        _positive("a", self.a, allow_zero=True)
        _positive("o", self.o)
        _positive("X", self.X)
        _positive("Y", self.Y)
        _positive("B", self.B)
        _positive("beta", self.beta)
        if not 0 <= self.p <= 1:
            raise ValueError(f"p must be within [0, 1], got {self.p!r}")

    @property
    def ratios(self) -> LawsRatios:
        """α = Y/X, γ = a/o, σ = 1/(oXB), β and p."""
        return LawsRatios(
            alpha=self.Y / self.X,
            gamma=self.a / self.o,
            sigma=1 / (self.o * self.X * self.B),
            beta=self.beta,
            p=self.p,
        )

    def before(self) -> float:
        """T_before = min(B, 1 / ((a + o) X)), bytes per second."""
        return min(self.B, 1 / ((self.a + self.o) * self.X))

    def after(self) -> float:
        """T_after = min(B, 1 / ((a + (1 − p) o) X), 1 / (p β o Y)), bytes per second."""
        host_work = (self.a + (1 - self.p) * self.o) * self.X
        nic_work = self.p * self.beta * self.o * self.Y
        return min(
            self.B,
            math.inf if host_work == 0 else 1 / host_work,
            math.inf if nic_work == 0 else 1 / nic_work,
        )

    def improvement(self) -> float:
        """δ = T_after / T_before − 1."""
        return self.after() / self.before() - 1
