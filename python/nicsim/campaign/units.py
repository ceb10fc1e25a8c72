"""Unit-bearing scenario values ("1Gbps", "64KiB", "500ns") as exact numbers.

Mirrors the core's parser (docs/models/engine.md#units) closely enough to
compare and plot swept values: the same unit names, the same exact factors,
and a decimal number without sign or exponent. It never decides whether a
scenario is valid (the core does); it only orders values of one kind.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import NamedTuple

K = 1000
KI = 1024

UNITS: dict[str, tuple[str, int]] = {
    **{
        u: ("bandwidth", f)
        for u, f in [
            ("bps", 1), ("bit/s", 1), ("kbps", K), ("Kbps", K), ("Mbps", K**2),
            ("Gbps", K**3), ("Tbps", K**4), ("kbit/s", K), ("Mbit/s", K**2),
            ("Gbit/s", K**3), ("B/s", 8), ("kB/s", 8 * K), ("MB/s", 8 * K**2),
            ("GB/s", 8 * K**3), ("KiB/s", 8 * KI), ("MiB/s", 8 * KI**2),
            ("GiB/s", 8 * KI**3),
        ]
    },
    **{u: ("frequency", f) for u, f in [("Hz", 1), ("kHz", K), ("MHz", K**2), ("GHz", K**3)]},
    **{
        u: ("duration", f)
        for u, f in [("ps", 1), ("ns", K), ("us", K**2), ("µs", K**2), ("ms", K**3), ("s", K**4)]
    },
    **{
        u: ("size", f)
        for u, f in [
            ("B", 1), ("kB", K), ("MB", K**2), ("GB", K**3),
            ("KiB", KI), ("MiB", KI**2), ("GiB", KI**3),
        ]
    },
}  # fmt: skip
"""Unit name to (kind, factor in the kind's engine unit: bit/s, Hz, ps, byte)."""

BASE_UNIT = {"bandwidth": "bit/s", "frequency": "Hz", "duration": "ps", "size": "B"}
"""The engine unit of each kind."""

_QUANTITY = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(\S+)\s*$")


class Quantity(NamedTuple):
    """A parsed value: its kind and its exact size in the kind's engine unit."""

    kind: str
    value: Fraction

    def __float__(self) -> float:
        return float(self.value)


def parse_quantity(text: str) -> Quantity | None:
    """``text`` as a :class:`Quantity`, or ``None`` if it is not a number
    followed by a known unit."""
    m = _QUANTITY.match(text)
    if m is None:
        return None
    unit = UNITS.get(m.group(2))
    if unit is None:
        return None
    kind, factor = unit
    return Quantity(kind, Fraction(m.group(1)) * factor)
