"""Sweep expansion: grid, zip, constraints, replicas, and errors that name
the sweep field and the knob."""

from __future__ import annotations

from pathlib import Path

import pytest

import nicsim
from nicsim.campaign import Sweep, SweepError
from nicsim.campaign.knobs import loads

from .conftest import SMALL_BULK, SWEEPS


def scenario_of(point) -> dict:  # noqa: ANN001 - a Point
    return loads(point.scenario)


def test_grid_is_the_cross_product_first_knob_slowest(base_file: Path) -> None:
    sweep = Sweep(
        base_file,
        grid={"links[0].rate": ["100Mbps", "1Gbps", "10Gbps"], "links[0].mtu": ["1500B", "1000B"]},
    )
    points = sweep.points()
    assert [tuple(p.params.values()) for p in points] == [
        ("100Mbps", "1500B"),
        ("100Mbps", "1000B"),
        ("1Gbps", "1500B"),
        ("1Gbps", "1000B"),
        ("10Gbps", "1500B"),
        ("10Gbps", "1000B"),
    ]
    for p in points:
        doc = scenario_of(p)
        assert doc["links"][0]["rate"] == p.params["links[0].rate"]
        assert doc["links"][0]["mtu"] == p.params["links[0].mtu"]
        assert doc["workload"]["bulk"]["bytes"] == "256KiB"  # the base is kept
    assert sweep.knobs == ["links[0].rate", "links[0].mtu"]


def test_a_list_of_grids_is_their_union(base_file: Path) -> None:
    sweep = Sweep(
        base_file,
        grid=[
            {"links[0].rate": ["100Mbps"], "links[0].mtu": ["1500B"]},
            {"links[0].rate": ["10Gbps"], "links[0].mtu": ["1500B", "9000B"]},
        ],
    )
    assert [tuple(p.params.values()) for p in sweep.points()] == [
        ("100Mbps", "1500B"),
        ("10Gbps", "1500B"),
        ("10Gbps", "9000B"),
    ]


def test_zip_advances_knobs_together_and_crosses_the_grid(base_file: Path) -> None:
    sweep = Sweep(
        base_file,
        grid={"links[0].rate": ["1Gbps", "10Gbps"]},
        zip={
            "hosts[0].tcp.tx_buffer": ["64KiB", "1MiB"],
            "hosts[1].tcp.rx_buffer": ["128KiB", "2MiB"],
        },
    )
    got = [tuple(p.params.values()) for p in sweep.points()]
    assert got == [
        ("1Gbps", "64KiB", "128KiB"),
        ("1Gbps", "1MiB", "2MiB"),
        ("10Gbps", "64KiB", "128KiB"),
        ("10Gbps", "1MiB", "2MiB"),
    ]
    doc = scenario_of(sweep.points()[1])
    assert doc["hosts"][0]["tcp"] == {"tx_buffer": "1MiB"}  # the table was created
    assert doc["hosts"][1]["tcp"] == {"rx_buffer": "2MiB"}


def test_zip_lists_must_have_equal_lengths(base_file: Path) -> None:
    with pytest.raises(SweepError) as e:
        Sweep(base_file, zip={"links[0].rate": ["1Gbps", "10Gbps"], "links[0].mtu": ["1500B"]})
    assert e.value.field == "zip"
    assert '"links[0].rate" has 2' in str(e.value) and '"links[0].mtu" has 1' in str(e.value)


def test_constraints_filter_points_comparing_units_by_value(base_file: Path) -> None:
    # Jumbo frames need at least 1 Gb/s: without the constraint the core
    # rejects the 100 Mb/s jumbo point.
    grid = {"links[0].rate": ["100Mbps", "1000Mbps", "10Gbps"], "links[0].mtu": ["1500B", "9000B"]}
    with pytest.raises(SweepError) as e:
        Sweep(base_file, grid=grid).points()
    assert e.value.field == 'grid."links[0].mtu"[1]'
    assert e.value.knob == "links[0].mtu"
    assert "100Mbps" in str(e.value)  # names the point
    assert "a constraint can leave such points out" in str(e.value)  # 9000B alone is fine
    sweep = Sweep(
        base_file, grid=grid, constraints=["links[0].mtu == '1500B' or links[0].rate >= 1Gbps"]
    )
    assert [tuple(p.params.values()) for p in sweep.points()] == [
        ("100Mbps", "1500B"),
        ("1000Mbps", "1500B"),
        ("1000Mbps", "9000B"),
        ("10Gbps", "1500B"),
        ("10Gbps", "9000B"),
    ]


def test_constraints_read_unswept_knobs_from_the_base_and_its_defaults(base_file: Path) -> None:
    grid = {"links[0].rate": ["100Mbps", "1Gbps"]}
    # propagation is in the base file; queue only has a default (1000).
    assert (
        len(Sweep(base_file, grid=grid, constraints=["links[0].propagation == 500ns"]).points())
        == 2
    )
    assert len(Sweep(base_file, grid=grid, constraints=["links[0].queue > 1000"]).points()) == 0
    with pytest.raises(SweepError) as e:
        Sweep(base_file, grid=grid, constraints=["links[0].nonsense == 1"]).points()
    assert e.value.field == "constraints[0]"
    assert "links[0].nonsense" in str(e.value)


def test_a_constraint_is_parsed_never_executed(base_file: Path) -> None:
    for bad in ["__import__('os').system('true')", "links[0].rate.__class__", "1 +", "lambda: 1"]:
        with pytest.raises(SweepError) as e:
            Sweep(base_file, grid={"links[0].rate": ["1Gbps"]}, constraints=["true", bad]).points()
        assert e.value.field == "constraints[1]"


def test_replicas_get_consecutive_seeds_from_the_base_or_the_sweep(base_file: Path) -> None:
    sweep = Sweep(base_file, grid={"links[0].rate": ["1Gbps", "10Gbps"]}, replicas=3)
    assert [(p.params["links[0].rate"], p.seed) for p in sweep.points()] == [
        ("1Gbps", 1),
        ("1Gbps", 2),
        ("1Gbps", 3),
        ("10Gbps", 1),
        ("10Gbps", 2),
        ("10Gbps", 3),
    ]
    assert all(scenario_of(p)["seed"] == p.seed for p in sweep.points())  # recorded in the scenario
    seeded = Sweep(base_file, grid={"links[0].rate": ["1Gbps"]}, replicas=2, seed=100)
    assert [p.seed for p in seeded.points()] == [100, 101]
    assert [p.replica for p in seeded.plan()] == [0, 1]
    assert len({p.key for p in sweep.plan()}) == 6


def test_a_malformed_knob_path_is_named(base_file: Path) -> None:
    with pytest.raises(SweepError) as e:
        Sweep(base_file, grid={"links[x].rate": ["1Gbps"]})
    assert e.value.field == 'grid."links[x].rate"'
    assert e.value.knob == "links[x].rate"


def test_a_knob_outside_the_scenario_is_named(base_file: Path) -> None:
    with pytest.raises(SweepError) as e:
        Sweep(base_file, grid={"links[3].rate": ["1Gbps"]}).points()
    assert e.value.field == 'grid."links[3].rate"[0]'
    assert "index 3 is out of range" in str(e.value)
    # An unknown key is the core's to reject; the error still names the knob.
    with pytest.raises(SweepError) as e:
        Sweep(base_file, grid={"links[0].rte": ["1Gbps"]}).points()
    assert e.value.field == 'grid."links[0].rte"[0]'
    assert e.value.knob == "links[0].rte"


def test_a_bad_value_names_the_field_the_knob_and_the_core_reason(base_file: Path) -> None:
    with pytest.raises(SweepError) as e:
        Sweep(base_file, grid={"links[0].rate": ["1Gbps", "1Gbs"]}).points()
    assert e.value.field == 'grid."links[0].rate"[1]'
    assert e.value.knob == "links[0].rate"
    assert 'unknown unit "Gbs"' in str(e.value)
    assert "constraint" not in str(e.value)  # the value is wrong on its own
    assert isinstance(e.value, ValueError)


def test_a_knob_set_twice_is_an_error(base_file: Path) -> None:
    with pytest.raises(SweepError, match="set twice"):
        Sweep(base_file, grid={"links[0].rate": ["1Gbps"]}, zip={"links[0].rate": ["10Gbps"]})


def test_equivalent_values_share_a_key_and_the_key_tracks_what_matters(base_file: Path) -> None:
    sweep = Sweep(base_file, grid={"links[0].rate": ["1Gbps", "1000Mbps", "10Gbps"]}, replicas=2)
    keys = [p.key for p in sweep.plan()]
    assert keys[0] == keys[2] and keys[1] == keys[3]  # 1Gbps == 1000Mbps, per seed
    assert len(set(keys)) == 4
    # The same scenario given as text, not as a file, has the same keys.
    again = Sweep(SMALL_BULK, grid={"links[0].rate": ["1Gbps", "1000Mbps", "10Gbps"]}, replicas=2)
    assert [p.key for p in again.plan()] == keys


def test_from_file_reads_a_relative_base_and_matches_the_python_api(
    tmp_path: Path, base_file: Path
) -> None:
    sweep_file = tmp_path / "sweeps" / "rates.toml"
    sweep_file.parent.mkdir()
    sweep_file.write_text(
        """
description = "rate sweep"
base = "../scenarios/small-bulk.toml"
replicas = 2
constraints = ["links[0].rate != '10Gbps' or links[0].mtu == '9000B'"]

[fixed]
"workload.bulk.bytes" = "128KiB"

[grid]
"links[0].rate" = ["1Gbps", "10Gbps"]
"links[0].mtu" = ["1500B", "9000B"]
""",
        encoding="utf-8",
    )
    from_file = Sweep.from_file(sweep_file)
    assert from_file.name == "rates"
    assert from_file.description == "rate sweep"
    in_python = nicsim.Sweep(
        base_file,
        grid={"links[0].rate": ["1Gbps", "10Gbps"], "links[0].mtu": ["1500B", "9000B"]},
        constraints=["links[0].rate != '10Gbps' or links[0].mtu == '9000B'"],
        replicas=2,
        fixed={"workload.bulk.bytes": "128KiB"},
    )
    assert from_file.points() == in_python.points()
    assert len(from_file.points()) == 6
    assert all(scenario_of(p)["workload"]["bulk"]["bytes"] == "128KiB" for p in from_file.points())


def test_an_inline_base_table(tmp_path: Path) -> None:
    path = tmp_path / "inline.toml"
    path.write_text(
        """
[grid]
"links[0].rate" = ["1Gbps", "10Gbps"]

[base]
name = "inline"
[[base.hosts]]
name = "a"
[[base.hosts]]
name = "b"
[[base.links]]
endpoints = ["a", "b"]
[base.workload.bulk]
from = "a"
to = "b"
bytes = "64KiB"
""",
        encoding="utf-8",
    )
    sweep = Sweep.from_file(path)
    assert [p.params for p in sweep.points()] == [
        {"links[0].rate": "1Gbps"},
        {"links[0].rate": "10Gbps"},
    ]
    assert scenario_of(sweep.points()[0])["name"] == "inline"


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ('base = "x.toml"\ngrids = {}\n', "grids"),
        ("[grid]\n", "base"),
        ('base = "missing.toml"\n', "base"),
        ('base = "../scenarios/small-bulk.toml"\nreplicas = 0\n', "replicas"),
        ('base = "../scenarios/small-bulk.toml"\nconstraints = "a == 1"\n', "constraints"),
        (
            'base = "../scenarios/small-bulk.toml"\n[grid]\n"links[0].rate" = "1Gbps"\n',
            'grid."links[0].rate"',
        ),
        (
            'base = "../scenarios/small-bulk.toml"\n[grid]\n"links[0].rate" = []\n',
            'grid."links[0].rate"',
        ),
    ],
)
def test_sweep_file_errors_name_the_field(
    tmp_path: Path, base_file: Path, text: str, field: str
) -> None:
    path = tmp_path / "sweeps" / "bad.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SweepError) as e:
        Sweep.from_file(path).points()
    assert e.value.field == field


@pytest.mark.parametrize("path", sorted(SWEEPS.glob("*.toml")), ids=lambda p: p.name)
def test_shipped_sweeps_expand(path: Path) -> None:
    sweep = Sweep.from_file(path)
    assert len(sweep.points()) > 0
