"""Sweeps: a base scenario and the knobs to vary, expanded into points.

A sweep file is TOML (see docs/campaigns.md)::

    name = "rate-mtu"                    # default: the file's stem
    base = "../gbe-mtu1500-bulk.toml"    # relative to this file; or a [base] table
    replicas = 2                         # seeds seed, seed+1, ... per point
    constraints = ["links[0].mtu == '1500B' or links[0].rate >= '1Gbps'"]

    [fixed]                              # the same in every point
    "workload.bulk.bytes" = "2MiB"

    [grid]                               # cross product
    "links[0].rate" = ["100Mbps", "1Gbps", "10Gbps"]
    "links[0].mtu" = ["1500B", "9000B"]

    [zip]                                # advance together, crossed with the grid
    "hosts[0].tcp.tx_buffer" = ["64KiB", "1MiB"]
    "hosts[1].tcp.rx_buffer" = ["64KiB", "1MiB"]

``[[grid]]`` (several tables) is the union of their cross products;
``[[zip]]`` gives several zip groups, each crossed with the rest. Points come
out in a fixed order: grid by grid, first knob slowest, then the zip groups,
then replicas. Each point's scenario is the base with its knobs set, checked
by the core; an error names the sweep field and the knob path.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Union

from . import knobs as K
from .cache import run_key, safe_name
from .expr import Constraint, ConstraintError

if TYPE_CHECKING:
    import pandas as pd

    from .executors import Executor
    from .run import OnResult, RunStats

SWEEP_KEYS = (
    "name",
    "description",
    "base",
    "seed",
    "replicas",
    "constraints",
    "fixed",
    "grid",
    "zip",
)
"""The keys a sweep file may have."""

MAX_SEED = 2**64 - 1

Values = Mapping[str, Sequence[Any]]
"""Knob path to the values it takes."""

Base = Union[str, "os.PathLike[str]", Mapping[str, Any]]
"""A scenario file, TOML text, or a parsed scenario table."""


class SweepError(ValueError):
    """A sweep that cannot be expanded: ``field`` names the sweep field
    (``grid."links[0].rate"[2]``), ``knob`` the knob path if one is at
    fault, ``reason`` says why."""

    def __init__(self, field: str, reason: str, knob: str | None = None) -> None:
        text = (
            f"{field}: {knob}: {reason}"
            if knob and not reason.startswith(knob)
            else f"{field}: {reason}"
        )
        super().__init__(text)
        self.field = field
        self.knob = knob
        self.reason = reason


class Point(NamedTuple):
    """One point of a sweep: its knob values, the scenario's TOML text and
    the seed to run it with."""

    params: dict[str, Any]
    scenario: str
    seed: int


@dataclass(frozen=True)
class PlannedPoint:
    """A point with what the cache needs: its replica index and run key."""

    params: dict[str, Any]
    scenario: str
    seed: int
    replica: int
    key: str
    fields: dict[str, str]  # knob -> sweep field that set it, for errors


def _field(section: str, index: int | None, knob: str, value_index: int | None = None) -> str:
    name = section if index is None else f"{section}[{index}]"
    name += "." + json.dumps(knob)
    if value_index is not None:
        name += f"[{value_index}]"
    return name


def _tables(section: str, value: Any) -> list[tuple[int | None, dict[str, Any]]]:
    """A ``grid`` or ``zip`` value as ``(array index or None, table)`` pairs."""
    if value is None:
        return []
    if isinstance(value, Mapping):
        return [(None, dict(value))]
    if isinstance(value, (list, tuple)) and all(isinstance(t, Mapping) for t in value):
        return [(i, dict(t)) for i, t in enumerate(value)]
    raise SweepError(
        section, "must map knob paths to lists of values (a table, or an array of tables)"
    )


class Sweep:
    """A base scenario and the knobs to vary.

    ``base`` is a scenario file, TOML text or a parsed scenario table;
    ``grid`` maps knob paths to value lists (cross product), or is a list of
    such maps (union); ``zip`` maps knob paths to equal-length lists that
    advance together, or is a list of such groups; ``fixed`` sets knobs in
    every point; ``constraints`` are expressions a point must satisfy
    (:mod:`nicsim.campaign.expr`); ``replicas`` runs each point with seeds
    ``seed, seed+1, ...`` where ``seed`` defaults to the base scenario's.
    """

    def __init__(
        self,
        base: Base,
        grid: Values | Sequence[Values] | None = None,
        zip: Values | Sequence[Values] | None = None,  # noqa: A002 - the sweep file's word
        constraints: Sequence[str] = (),
        replicas: int = 1,
        *,
        fixed: Mapping[str, Any] | None = None,
        seed: int | None = None,
        name: str | None = None,
        description: str = "",
        source: str | None = None,
    ) -> None:
        self.source = source
        self.description = description
        self._load_base(base)
        self.fixed = dict(fixed or {})
        self.grids = _tables("grid", grid) or [(None, {})]
        self.zips = _tables("zip", zip)
        if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 1:
            raise SweepError("replicas", f"must be a whole number of at least 1, got {replicas!r}")
        self.replicas = replicas
        if isinstance(constraints, str):
            constraints = [constraints]
        self.constraints: list[Constraint] = []
        for i, text in enumerate(constraints):
            try:
                self.constraints.append(Constraint.parse(text))
            except ConstraintError as e:
                raise SweepError(f"constraints[{i}]", str(e)) from None
        self._check_knobs()
        self._base_resolved = self._resolve_base()
        if seed is not None and (
            isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED
        ):
            raise SweepError("seed", f"must be a whole number from 0 to 2^64-1, got {seed!r}")
        self.seed: int = int(self._base_resolved.get("seed", 1)) if seed is None else seed
        self.name = name or str(self._base_resolved.get("name") or "sweep")
        self._plan: list[PlannedPoint] | None = None

    # -- construction -----------------------------------------------------

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> Sweep:
        """Read a sweep file (TOML); ``base`` paths are relative to it."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as e:
            raise SweepError(str(path), f"not UTF-8 text ({e.reason} at byte {e.start})") from None
        return cls.from_toml(text, name=path.stem, directory=path.parent, source=str(path))

    @classmethod
    def from_toml(
        cls,
        text: str,
        *,
        name: str | None = None,
        directory: str | os.PathLike[str] = ".",
        source: str | None = None,
    ) -> Sweep:
        """A sweep from TOML text; ``directory`` anchors a relative ``base``."""
        try:
            doc = K.loads(text)
        except K.TOMLDecodeError as e:
            raise SweepError(source or "<sweep>", f"not valid TOML: {e}") from None
        unknown = [k for k in doc if k not in SWEEP_KEYS]
        if unknown:
            raise SweepError(unknown[0], f"unknown key; a sweep has {', '.join(SWEEP_KEYS)}")
        if "base" not in doc:
            raise SweepError("base", "missing: name the base scenario file or give a [base] table")
        base = doc["base"]
        if isinstance(base, str):
            base_path = Path(directory) / base
            if not base_path.is_file():
                raise SweepError("base", f"no scenario file {base_path}")
            base = base_path
        elif not isinstance(base, Mapping):
            raise SweepError("base", "must be a scenario file name or a table")
        constraints = doc.get("constraints", [])
        if isinstance(constraints, str) or not isinstance(constraints, list):
            raise SweepError("constraints", "must be a list of strings")
        description = doc.get("description", "")
        if not isinstance(description, str):
            raise SweepError("description", "must be a string")
        fixed = doc.get("fixed")
        if fixed is not None and not isinstance(fixed, Mapping):
            raise SweepError("fixed", "must be a table of knob paths and values")
        sweep_name = doc.get("name", name)
        if sweep_name is not None and not isinstance(sweep_name, str):
            raise SweepError("name", "must be a string")
        return cls(
            base,
            grid=doc.get("grid"),
            zip=doc.get("zip"),
            constraints=constraints,
            replicas=doc.get("replicas", 1),
            fixed=fixed,
            seed=doc.get("seed"),
            name=sweep_name,
            description=description,
            source=source,
        )

    def _load_base(self, base: Base) -> None:
        if isinstance(base, Mapping):
            self.base_doc = json.loads(json.dumps(base))  # a deep, plain copy
            self.base_source = "[base]"
            return
        from nicsim.api import read_scenario

        try:
            text, source = read_scenario(base)
        except OSError as e:
            raise SweepError("base", f"cannot read the base scenario: {e}") from None
        except UnicodeDecodeError as e:
            raise SweepError("base", f"not UTF-8 text ({e.reason} at byte {e.start})") from None
        try:
            self.base_doc = K.loads(text)
        except K.TOMLDecodeError as e:
            raise SweepError("base", f"{source}: not valid TOML: {e}") from None
        self.base_source = source

    def _sections(self) -> list[tuple[str, str, list[Any] | None]]:
        """Every (sweep field, knob, values or None for fixed) in the sweep."""
        out: list[tuple[str, str, list[Any] | None]] = []
        for knob in self.fixed:
            out.append((_field("fixed", None, knob), knob, None))
        for section, tables in (("grid", self.grids), ("zip", self.zips)):
            for index, table in tables:
                for knob, values in table.items():
                    out.append((_field(section, index, knob), knob, values))
        return out

    def _check_knobs(self) -> None:
        for field, knob, values in self._sections():
            try:
                K.parse_knob(knob)
            except K.KnobError as e:
                raise SweepError(field, e.reason, knob) from None
            if values is not None and (
                isinstance(values, (str, Mapping)) or not isinstance(values, Sequence)
            ):
                raise SweepError(field, f"must be a list of values, got {values!r}", knob)
            if values is not None and len(values) == 0:
                raise SweepError(field, "has no values", knob)
        for index, table in self.zips:
            lengths = {knob: len(values) for knob, values in table.items()}
            if len(set(lengths.values())) > 1:
                detail = ", ".join(f"{json.dumps(k)} has {n}" for k, n in lengths.items())
                raise SweepError(
                    "zip" if index is None else f"zip[{index}]",
                    f"lists of different lengths: {detail}",
                )
        # A knob may appear in several grids (they are alternatives), but only
        # once in what makes up one point.
        zipped = [k for _, t in self.zips for k in t]
        for _, grid in self.grids:
            seen: dict[str, str] = {}
            for knob in [*self.fixed, *grid, *zipped]:
                owner = "fixed" if knob in self.fixed else "grid" if knob in grid else "zip"
                if knob in seen:
                    raise SweepError(owner, f"set twice (also in {seen[knob]})", knob)
                seen[knob] = owner

    def _resolve_base(self) -> dict[str, Any]:
        from nicsim import resolve
        from nicsim._core import ScenarioError

        doc = json.loads(json.dumps(self.base_doc))
        for knob, value in self.fixed.items():
            try:
                K.set_knob(doc, knob, value)
            except K.KnobError as e:
                raise SweepError(_field("fixed", None, knob), e.reason, knob) from None
        self._fixed_doc = doc
        try:
            resolved: dict[str, Any] = resolve(K.dumps(doc))
        except ScenarioError as e:
            raise SweepError("base", f"{e.path}: {e.reason}" if e.path else e.reason) from None
        except (TypeError, ValueError) as e:  # tomli-w cannot write a value
            raise SweepError("base", str(e)) from None
        return resolved

    # -- expansion --------------------------------------------------------

    @property
    def knobs(self) -> list[str]:
        """The swept knob paths (grid and zip), in column order."""
        out: list[str] = []
        for _, grid in self.grids:
            out += [k for k in grid if k not in out]
        for _, table in self.zips:
            out += [k for k in table if k not in out]
        return out

    @property
    def axes(self) -> list[list[str]]:
        """The swept knobs grouped by what moves together: each grid knob
        alone, each zip group as one."""
        out: list[list[str]] = []
        for knob in self.knobs:
            group = next((list(t) for _, t in self.zips if knob in t), [knob])
            if group not in out:
                out.append(group)
        return out

    def _combinations(self) -> list[tuple[dict[str, Any], dict[str, str]]]:
        """Every (params, knob -> field) before constraints."""
        out = []
        zip_axes = [
            [
                {k: (v[i], _field("zip", index, k, i)) for k, v in table.items()}
                for i in range(len(next(iter(table.values()))))
            ]
            for index, table in self.zips
            if table
        ]
        for index, grid in self.grids:
            grid_axes = [
                [{knob: (value, _field("grid", index, knob, i))} for i, value in enumerate(values)]
                for knob, values in grid.items()
            ]
            for combo in itertools.product(*grid_axes, *zip_axes):
                params: dict[str, Any] = {}
                fields: dict[str, str] = {}
                for part in combo:
                    for knob, (value, field) in part.items():
                        params[knob] = value
                        fields[knob] = field
                out.append((params, fields))
        return out

    def _allowed(self, params: dict[str, Any]) -> bool:
        def lookup(knob: str) -> Any:
            if knob in params:
                return params[knob]
            value = K.get_knob(self._fixed_doc, knob, None)
            if value is None:
                value = K.get_knob(self._base_resolved, knob, _MISSING)
                if value is _MISSING:
                    raise K.KnobError(knob, "neither swept nor in the base scenario")
            return value

        for i, constraint in enumerate(self.constraints):
            try:
                if not constraint.holds(lookup):
                    return False
            except (ConstraintError, K.KnobError) as e:
                point = ", ".join(f"{k}={v!r}" for k, v in params.items())
                where = "" if isinstance(e, ConstraintError) else f" in {constraint.text!r}"
                raise SweepError(f"constraints[{i}]", f"{e}{where} (at point {point})") from None
        return True

    def plan(self) -> list[PlannedPoint]:
        """Every point with its replica index and cache key, each scenario
        checked by the core. Computed once."""
        if self._plan is None:
            self._plan = self._expand()
        return self._plan

    def _expand(self) -> list[PlannedPoint]:
        from nicsim import __version__, resolve
        from nicsim._core import ScenarioError

        planned: list[PlannedPoint] = []
        for params, fields in self._combinations():
            if not self._allowed(params):
                continue
            doc = json.loads(json.dumps(self._fixed_doc))
            for knob, value in params.items():
                try:
                    K.set_knob(doc, knob, value)
                except K.KnobError as e:
                    raise SweepError(fields[knob], e.reason, knob) from None
            seed0 = doc.get("seed", self.seed) if "seed" in params else self.seed
            if (
                isinstance(seed0, bool)
                or not isinstance(seed0, int)
                or seed0 + self.replicas - 1 > MAX_SEED
            ):
                raise SweepError(
                    fields.get("seed", "seed"), f"not a usable seed: {seed0!r}", "seed"
                )
            for replica in range(self.replicas):
                seed = seed0 + replica
                doc["seed"] = seed
                try:
                    text = K.dumps(doc)
                    resolved = resolve(text)
                except ScenarioError as e:
                    raise self._point_error(e, params, fields) from None
                except (TypeError, ValueError) as e:  # a value TOML cannot hold
                    first = next(iter(params), None)
                    raise SweepError(fields.get(first or "", "grid"), str(e), first) from None
                planned.append(
                    PlannedPoint(
                        dict(params),
                        text,
                        seed,
                        replica,
                        run_key(resolved, seed, __version__),
                        fields,
                    )
                )
        return planned

    def _point_error(self, e: Any, params: dict[str, Any], fields: dict[str, str]) -> SweepError:
        path = str(e.path or "")
        point = ", ".join(f"{k}={v!r}" for k, v in params.items())
        culprit = next(
            (
                k
                for k in params
                if path == k or path.startswith(k + ".") or path.startswith(k + "[")
            ),
            None,
        )
        if culprit is None:  # the point's knobs broke a field they do not set
            culprit = next(
                (k for k in params if k.startswith(path + ".") or k.startswith(path + "[")), None
            )
        reason = f"{path}: {e.reason}" if path else str(e.reason)
        if culprit is None:
            return SweepError("base", f"{reason} (at point {point})")
        if len(params) > 1 and self._valid_alone(culprit, params[culprit]):
            reason += f" (at point {point}; a constraint can leave such points out)"
        return SweepError(fields[culprit], reason, culprit)

    def _valid_alone(self, knob: str, value: Any) -> bool:
        """Whether the base with only ``knob`` set to ``value`` is valid: if
        so, a point fails for its combination of values."""
        from nicsim import resolve
        from nicsim._core import ScenarioError

        doc = json.loads(json.dumps(self._fixed_doc))
        try:
            K.set_knob(doc, knob, value)
            resolve(K.dumps(doc))
        except (ScenarioError, K.KnobError, TypeError, ValueError):
            return False
        return True

    def points(self) -> list[Point]:
        """Every point as ``(params, scenario_text, seed)``."""
        return [Point(p.params, p.scenario, p.seed) for p in self.plan()]

    def __len__(self) -> int:
        return len(self.plan())

    def manifest(self) -> dict[str, Any]:
        """What the cache records about this sweep (plain data)."""
        from nicsim import __version__

        return {
            "format": 1,
            "name": self.name,
            "description": self.description,
            "source": self.source,
            "base": os.path.normpath(self.base_source)
            if self.base_source != "<string>"
            else "<string>",
            "knobs": self.knobs,
            "axes": self.axes,
            "fixed": self.fixed,
            "constraints": [c.text for c in self.constraints],
            "replicas": self.replicas,
            "seed": self.seed,
            "nicsim_version": __version__,
            "points": [
                {"key": p.key, "params": p.params, "replica": p.replica, "seed": p.seed}
                for p in self.plan()
            ],
        }

    # -- running ----------------------------------------------------------

    def default_results(self) -> Path:
        """``results/sweeps/<name>``, relative to the working directory."""
        return Path("results") / "sweeps" / safe_name(self.name)

    def run_missing(
        self,
        executor: Executor | None = None,
        results: str | os.PathLike[str] | None = None,
        *,
        progress: bool | None = None,
        on_result: OnResult | None = None,
    ) -> RunStats:
        """Run the points whose results are not cached yet; see
        :func:`nicsim.campaign.run.run_missing`."""
        from .cache import Cache
        from .run import run_missing

        with Cache(results if results is not None else self.default_results()) as cache:
            return run_missing(self, cache, executor, progress=progress, on_result=on_result)

    def run(
        self,
        executor: Executor | None = None,
        results: str | os.PathLike[str] | None = None,
        *,
        progress: bool | None = None,
        on_result: OnResult | None = None,
    ) -> pd.DataFrame:
        """Run what is missing and return every point's row (see
        :meth:`Cache.to_pandas`)."""
        from .cache import Cache

        results_dir = results if results is not None else self.default_results()
        self.run_missing(executor, results_dir, progress=progress, on_result=on_result)
        with Cache(results_dir) as cache:
            return cache.to_pandas(self.name)

    def __repr__(self) -> str:
        return f"Sweep({self.name!r}, {len(self.plan())} points, knobs={self.knobs})"


_MISSING = object()
