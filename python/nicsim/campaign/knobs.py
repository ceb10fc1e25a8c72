"""Knob paths into a scenario: parse ``links[0].rate``, read and set values.

A knob path is a dotted list of table keys, each optionally followed by
array indices: ``hosts[1].tcp.rx_buffer``, ``workload.bulk.bytes``,
``seed``. Setting a knob creates missing tables on the way
(``hosts[0].cpu.clock`` on a host without a ``cpu`` table) but never array
entries: ``hosts[5]`` on a two-host scenario is an error. Scenarios are read
with tomllib (tomli before Python 3.11) and written back with tomli-w; the
core then validates the result.
"""

from __future__ import annotations

import copy
import re
import sys
from typing import Any, Union

import tomli_w

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.9/3.10 only
    import tomli as tomllib

Step = Union[str, int]
"""One step of a knob path: a table key or an array index."""

_SEGMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)((?:\[\d+\])*)$")
_INDEX = re.compile(r"\[(\d+)\]")


class KnobError(ValueError):
    """A knob path that is malformed or does not fit the scenario."""

    def __init__(self, knob: str, reason: str) -> None:
        super().__init__(f"{knob}: {reason}")
        self.knob = knob
        self.reason = reason


def parse_knob(knob: str) -> list[Step]:
    """The steps of ``knob``: ``"links[0].rate"`` is ``["links", 0, "rate"]``."""
    if not isinstance(knob, str) or not knob:
        raise KnobError(str(knob), "a knob path is a non-empty string such as links[0].rate")
    steps: list[Step] = []
    for segment in knob.split("."):
        m = _SEGMENT.match(segment)
        if m is None:
            raise KnobError(
                knob,
                f"malformed knob path at {segment!r}: write table keys joined by dots, "
                "each optionally followed by [index], such as hosts[1].tcp.rx_buffer",
            )
        steps.append(m.group(1))
        steps.extend(int(i) for i in _INDEX.findall(m.group(2)))
    return steps


def format_steps(steps: list[Step]) -> str:
    """The knob path of ``steps`` (the inverse of :func:`parse_knob`)."""
    out = ""
    for step in steps:
        if isinstance(step, int):
            out += f"[{step}]"
        else:
            out += f".{step}" if out else step
    return out


_MISSING = object()


def get_knob(scenario: dict[str, Any], knob: str, default: Any = _MISSING) -> Any:
    """The value at ``knob`` in a parsed scenario; ``default`` (or
    :class:`KnobError` when none is given) if it is not there."""
    node: Any = scenario
    for step in parse_knob(knob):
        if isinstance(step, int):
            ok = isinstance(node, list) and step < len(node)
        else:
            ok = isinstance(node, dict) and step in node
        if not ok:
            if default is _MISSING:
                raise KnobError(knob, "not in the scenario")
            return default
        node = node[step]
    return node


def set_knob(scenario: dict[str, Any], knob: str, value: Any) -> None:
    """Set ``knob`` to ``value`` in a parsed scenario, in place, creating
    missing tables on the way. ``None`` removes the key (the core's default
    applies again); it cannot remove an array entry."""
    steps = parse_knob(knob)
    node: Any = scenario
    for i, step in enumerate(steps):
        last = i == len(steps) - 1
        here = format_steps(steps[:i]) or "the scenario"
        if isinstance(step, int):
            if not isinstance(node, list):
                raise KnobError(knob, f"{here} is not an array, so it has no [{step}]")
            if step >= len(node):
                raise KnobError(
                    knob, f"index {step} is out of range: {here} has {len(node)} entries"
                )
        else:
            if not isinstance(node, dict):
                raise KnobError(knob, f"{here} is a value, not a table, so it has no key {step!r}")
            if step not in node and not last:
                if isinstance(steps[i + 1], int):
                    raise KnobError(
                        knob,
                        f"{format_steps(steps[: i + 1])} is not in the scenario, "
                        "so it has no entries to index",
                    )
                node[step] = {}
        if last:
            if value is not None:
                node[step] = copy.deepcopy(value)
            elif isinstance(step, int):
                raise KnobError(knob, "an array entry cannot be removed (set to none)")
            else:
                node.pop(step, None)
        else:
            node = node[step]


def loads(text: str) -> dict[str, Any]:
    """Parse TOML text."""
    return tomllib.loads(text)


def dumps(scenario: dict[str, Any]) -> str:
    """Serialize a parsed scenario as TOML."""
    return tomli_w.dumps(scenario)


TOMLDecodeError = tomllib.TOMLDecodeError
