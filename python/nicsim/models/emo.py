"""EMO: the extensible message-oriented offload model of Gilfeather and Maccabe.

P. Gilfeather, A. B. Maccabe, "Modeling protocol offload for
message-oriented communication", IEEE Cluster 2005 (doi
10.1109/CLUSTR.2005.347069).

What it models: one message's path wire → NIC → host OS → application, as
cycles of protocol work on each processor plus the cycles and times to move
data and control between them. Variables (units):

* ``C_N``, ``C_H``, ``C_A``: protocol cycles on the NIC, on the host OS and
  in the application (C_A: the application's own work per message);
* ``O_NH``, ``O_HA``: host CPU cycles to move data and control NIC↔host and
  host↔application;
* ``L_NH``, ``L_HA``: time to move a message NIC→host and host→application
  (DMA, interrupts, wake-ups: not CPU work), s; ``L_W`` the wire, s;
* ``R_N``, ``R_H``: NIC and host processor rates, cycles per second.

The form used here (``shared/spec/models.md``):

    latency  = L_W + C_N/R_N + L_NH + (O_NH + C_H)/R_H + L_HA
    overhead o = (O_NH + C_H + O_HA) / R_H
    gap      g = max(C_N/R_N, o)

Mappings: to LogP, ``o`` and ``g`` as above and ``L`` the latency less the
host's share of it; to LAWS, α = R_H/R_N, γ = C_A / (O_NH + C_H + O_HA),
σ = (message bytes · R_H / (O_NH + C_H + O_HA)) / B, and β = the NIC's
cycles over the host cycles they replace.

What could not be verified: only the paper's abstract was readable (IEEE
Xplore record; the Cluster 2005 programme page). It confirms EMO is
message- rather than flow-oriented, emphasises the protocol rather than the
algorithm, and maps to LAWS and LogP; it names interrupt coalescing and
splintered TCP as the alternatives it contrasts with full offload. The
equations above are a reconstruction from the variable list, not the
paper's own; in particular whether ``O_HA`` is part of the latency (here it
is not: it is folded into ``L_HA``) and whether the gap includes the host's
data movement could not be checked.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .laws import LawsRatios
from .loggp import LogGP


@dataclass(frozen=True)
class Emo:
    """EMO from explicit parameters (cycles, seconds, cycles per second)."""

    C_N: float
    """Protocol cycles per message on the NIC processor."""
    C_H: float
    """Protocol cycles per message on the host."""
    R_N: float
    """NIC processor rate, cycles/s."""
    R_H: float
    """Host rate, cycles/s."""
    C_A: float = 0.0
    """Application cycles per message."""
    O_NH: float = 0.0
    """Host cycles to move a message between NIC and host."""
    O_HA: float = 0.0
    """Host cycles to move a message between host and application."""
    L_W: float = 0.0
    """Wire time, s."""
    L_NH: float = 0.0
    """NIC→host transfer time (DMA, notification), s."""
    L_HA: float = 0.0
    """Host→application time (wake-up, copy-out not charged as O_HA), s."""

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            if math.isnan(value) or math.isinf(value) or value < 0:
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
        if self.R_H == 0 or (self.R_N == 0 and self.C_N > 0):
            raise ValueError("R_H (and R_N when C_N > 0) must be > 0")

    def nic_time(self) -> float:
        """C_N / R_N, s."""
        return 0.0 if self.C_N == 0 else self.C_N / self.R_N

    def latency(self) -> float:
        """L_W + C_N/R_N + L_NH + (O_NH + C_H)/R_H + L_HA, s."""
        return self.L_W + self.nic_time() + self.L_NH + (self.O_NH + self.C_H) / self.R_H + self.L_HA

    def overhead(self) -> float:
        """Host CPU time per message: (O_NH + C_H + O_HA) / R_H, s."""
        return (self.O_NH + self.C_H + self.O_HA) / self.R_H

    def gap(self) -> float:
        """Shortest interval between messages: max(C_N/R_N, o), s."""
        return max(self.nic_time(), self.overhead())

    def to_logp(self) -> LogGP:
        """LogP with o = overhead, g = gap and L = latency − o (the part of
        the latency in which the host CPU is free); G = 0 (EMO is per message)."""
        o = self.overhead()
        return LogGP(L=max(0.0, self.latency() - o), o=o, g=self.gap(), G=0.0)

    def to_laws(self, message_bytes: float, bandwidth: float, baseline: Emo | None = None) -> LawsRatios:
        """LAWS ratios for a stream of ``message_bytes`` messages over a wire
        of ``bandwidth`` bytes/s. Without ``baseline`` this configuration is
        taken as the host-only one and the offload is assumed whole and
        faithful (p = 1, β = 1). With
        ``baseline`` (the same system without offload), β = C_N / (the
        baseline's host communication cycles this one no longer does) and
        p is that share of the baseline's overhead."""
        if message_bytes <= 0 or bandwidth <= 0:
            raise ValueError("message_bytes and bandwidth must be > 0")
        ref = self if baseline is None else baseline
        o_cycles = ref.O_NH + ref.C_H + ref.O_HA
        if o_cycles <= 0:
            raise ValueError("the host-only configuration has no communication cycles")
        sigma = message_bytes * ref.R_H / o_cycles / bandwidth
        gamma = ref.C_A / o_cycles
        alpha = ref.R_H / self.R_N if self.R_N > 0 else math.inf
        if baseline is None:
            return LawsRatios(alpha=alpha, gamma=gamma, sigma=sigma, beta=1.0, p=1.0)
        moved = o_cycles - (self.O_NH + self.C_H + self.O_HA)
        if moved <= 0:
            raise ValueError("the offloaded configuration leaves the host no fewer cycles than the baseline")
        return LawsRatios(alpha=alpha, gamma=gamma, sigma=sigma, beta=self.C_N / moved, p=moved / o_cycles)
