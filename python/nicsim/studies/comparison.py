"""``comparison.csv``: every number a reproduction puts beside the study's.

The format is fixed by ``validation.md`` (the project's specification): one
row per compared quantity, with exactly the columns of :data:`COLUMNS`.
Numbers are plain decimals (no thousands separators, no exponent, no unit in
the cell); ``error_pct`` is computed from ``nicsim`` and ``published``,
never typed; ``role`` is one of :data:`ROLES`. A claim (a qualitative
statement of the study's text checked on nicsim's run) is a row with role
``claim``, unit ``bool`` and ``nicsim`` 1 (holds) or 0 (does not).

:class:`Row` checks a row when it is made, :func:`write` writes rows and
:func:`read` reads a file back, checking every cell, so a malformed file is
refused with the line and the reason.
"""

from __future__ import annotations

import csv
import math
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

COLUMNS = ("study", "id", "description", "unit", "published", "nicsim", "error_pct", "role")
"""The columns, in order (validation.md)."""
ROLES = ("calibration", "prediction", "claim")
"""What a row is: a number the profile was fitted to, a number it predicts,
or a claim of the text checked on the run."""
SIGNIFICANT = 6
"""Significant digits written for a number."""

_ID = re.compile(r"^[a-z0-9][a-z0-9_]*(\.[a-z0-9_]+)*$")
_STUDY = re.compile(r"^[a-z][a-z0-9_]*$")
_NUMBER = re.compile(r"^-?[0-9]+(\.[0-9]+)?$")


class ComparisonError(ValueError):
    """A row or a file that does not follow the format; the message says where and why."""


def decimal(x: float) -> str:
    """``x`` as a plain decimal with :data:`SIGNIFICANT` significant digits,
    or every digit of its whole part when it has more (``0.000123457``,
    ``812744``, ``1234567``, ``-3.5``): no exponent, no separators."""
    if not math.isfinite(x):
        raise ComparisonError(f"not a finite number: {x!r}")
    if x == 0:
        return "0"
    places = max(0, SIGNIFICANT - 1 - math.floor(math.log10(abs(x))))
    s = f"{x:.{places}f}"
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def error_pct(nicsim: float, published: float | None) -> float | None:
    """100 (nicsim - published) / published, or ``None`` without a published value."""
    if published is None:
        return None
    if published == 0:
        raise ComparisonError("a published value of 0 has no relative error; compare another quantity")
    return 100.0 * (nicsim - published) / published


def pct(error: float | None) -> str:
    """A relative error for a report: ``+3.2 %``, ``0.0 %``, or ``—`` without one."""
    if error is None:
        return "—"
    return "0.0 %" if abs(error) < 0.05 else f"{error:+.1f} %"


@dataclass(frozen=True)
class Row:
    """One compared quantity; checked when made."""

    study: str
    id: str
    description: str
    unit: str
    nicsim: float
    published: float | None
    role: str

    def __post_init__(self) -> None:
        where = f"{self.study or '?'}/{self.id or '?'}"
        if not _STUDY.match(self.study):
            raise ComparisonError(f"{where}: study: a lower-case name, got {self.study!r}")
        if not _ID.match(self.id):
            raise ComparisonError(
                f"{where}: id: dot-separated lower-case words (letters, digits, _), got {self.id!r}"
            )
        if self.role not in ROLES:
            raise ComparisonError(f"{where}: role: one of {', '.join(ROLES)}, got {self.role!r}")
        for name, text in (("description", self.description), ("unit", self.unit)):
            if not text.strip() or "\n" in text:
                raise ComparisonError(f"{where}: {name}: one non-empty line, got {text!r}")
        if _NUMBER.match(self.unit.strip()):
            raise ComparisonError(f"{where}: unit: a unit, not a number, got {self.unit!r}")
        for name, value in (("nicsim", self.nicsim), ("published", self.published)):
            if value is None and name == "published":
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ComparisonError(f"{where}: {name}: a finite number, got {value!r}")
        if self.role == "claim":
            if self.unit != "bool" or self.nicsim not in (0, 1) or self.published is not None:
                raise ComparisonError(
                    f"{where}: a claim has unit bool, nicsim 1 or 0 and no published value"
                )
            if not self.id.startswith("claim."):
                raise ComparisonError(f"{where}: id: a claim's id starts with 'claim.'")
        elif self.id.startswith("claim."):
            raise ComparisonError(f"{where}: id: 'claim.' ids are for role claim, this is {self.role}")
        error_pct(self.nicsim, self.published)

    @property
    def error_pct(self) -> float | None:
        return error_pct(self.nicsim, self.published)

    def cells(self) -> dict[str, str]:
        """The row as the file's cells."""
        err = self.error_pct
        return {
            "study": self.study,
            "id": self.id,
            "description": self.description,
            "unit": self.unit,
            "published": "" if self.published is None else decimal(self.published),
            "nicsim": decimal(self.nicsim),
            "error_pct": "" if err is None else decimal(err),
            "role": self.role,
        }


@dataclass(frozen=True)
class Claim:
    """A qualitative statement of the study's text and nicsim's verdict on it.

    ``holds`` must be computed from the run by the code that makes the
    claim; ``evidence`` says, in numbers, what that code saw."""

    study: str
    id: str
    quote: str
    """The study's sentence (or a faithful one-line paraphrase marked as such)."""
    evidence: str
    holds: bool

    def __post_init__(self) -> None:
        if not isinstance(self.holds, bool):
            # numpy booleans and the like are fine once made bool; a string or
            # a number is a verdict somebody typed.
            if type(self.holds).__name__ != "bool_":
                raise ComparisonError(f"{self.study}/{self.id}: holds: a computed bool, got {self.holds!r}")
            object.__setattr__(self, "holds", bool(self.holds))
        if not self.evidence.strip():
            raise ComparisonError(f"{self.study}/{self.id}: evidence: say what the run showed")

    def row(self) -> Row:
        return Row(self.study, self.id, " ".join(self.quote.split()), "bool", 1.0 if self.holds else 0.0,
                   None, "claim")


def check_unique(rows: Sequence[Row]) -> None:
    """Refuse two rows with the same (study, id)."""
    seen: set[tuple[str, str]] = set()
    for r in rows:
        if (r.study, r.id) in seen:
            raise ComparisonError(f"{r.study}/{r.id}: id appears twice")
        seen.add((r.study, r.id))


def write(path: str | os.PathLike[str], rows: Iterable[Row]) -> Path:
    """``rows`` as ``comparison.csv`` (after checking the ids are unique)."""
    rows = list(rows)
    check_unique(rows)
    out = Path(path)
    with out.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(COLUMNS), lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow(r.cells())
    return out


def read(path: str | os.PathLike[str]) -> list[Row]:
    """The rows of a ``comparison.csv``, every cell checked: a malformed file
    raises :class:`ComparisonError` naming the line and the reason."""
    p = Path(path)
    rows: list[Row] = []
    with p.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        if tuple(reader.fieldnames or ()) != COLUMNS:
            raise ComparisonError(f"{p}: header: the columns are {','.join(COLUMNS)}, got {reader.fieldnames}")
        for line, cells in enumerate(reader, start=2):
            try:
                rows.append(_parse(cells))
            except ComparisonError as e:
                raise ComparisonError(f"{p}:{line}: {e}") from None
    check_unique(rows)
    return rows


def _number(cells: dict[str, str], name: str, *, optional: bool) -> float | None:
    text = cells.get(name) or ""
    if text == "" and optional:
        return None
    if not _NUMBER.match(text):
        raise ComparisonError(f"{name}: a plain decimal (no unit, separator or exponent), got {text!r}")
    return float(text)


def _parse(cells: dict[str, str]) -> Row:
    nicsim = _number(cells, "nicsim", optional=False)
    assert nicsim is not None
    row = Row(
        study=cells["study"], id=cells["id"], description=cells["description"], unit=cells["unit"],
        nicsim=nicsim, published=_number(cells, "published", optional=True), role=cells["role"],
    )
    typed = _number(cells, "error_pct", optional=True)
    computed = row.error_pct
    if (typed is None) != (computed is None):
        raise ComparisonError("error_pct: given exactly when published is")
    if typed is not None and computed is not None and row.published is not None:
        # The cells are rounded: allow what rounding nicsim, published and
        # error_pct to their printed digits can move the error by.
        n, p = _half_ulp(cells["nicsim"]), _half_ulp(cells["published"])
        slack = 100 * (n + abs(row.nicsim / row.published) * p) / abs(row.published) + _half_ulp(cells["error_pct"])
        if abs(typed - computed) > slack * 1.01:
            raise ComparisonError(
                f"error_pct: {typed} is not 100 (nicsim - published) / published = {computed:.6g}"
            )
    return row


def _half_ulp(text: str) -> float:
    """Half a unit in the last printed digit of a plain decimal."""
    decimals = len(text.split(".", 1)[1]) if "." in text else 0
    return 0.5 * 10.0 ** -decimals
