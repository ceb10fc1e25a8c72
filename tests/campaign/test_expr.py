"""The constraint language and the knob paths it reads."""

from __future__ import annotations

import pytest

from nicsim.campaign.expr import Constraint, ConstraintError
from nicsim.campaign.knobs import KnobError, get_knob, parse_knob, set_knob
from nicsim.campaign.units import parse_quantity

POINT = {
    "links[0].rate": "100Mbps",
    "links[0].mtu": "9000B",
    "hosts[0].tcp.nagle": True,
    "hosts[0].tcp.delayed_ack": "off",
    "links[0].queue": 1000,
    "hosts[0].tcp.mss": None,
}


def holds(text: str) -> bool:
    return Constraint.parse(text).holds(POINT.__getitem__)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("links[0].rate < '1Gbps'", True),
        ("links[0].rate < 1Gbps", True),  # an unquoted quantity is a string
        ("links[0].rate == '100000kbps'", True),  # compared by value
        ("links[0].rate >= 12.5MB/s", True),  # 12.5 MB/s is 100 Mb/s
        ("links[0].rate > 12.5MB/s", False),
        ("links[0].mtu == '1500B' or links[0].rate >= '1Gbps'", False),
        ("not (links[0].mtu == '1500B')", True),
        ("hosts[0].tcp.nagle", True),
        ("hosts[0].tcp.nagle == false", False),
        ("hosts[0].tcp.delayed_ack == 'off'", True),
        ("hosts[0].tcp.delayed_ack != '10ms'", True),
        ("999 < links[0].queue <= 1000", True),
        ("links[0].queue == 1000.0", True),
        ("links[0].rate in ['10Mbps', '0.1Gbps']", True),
        ("links[0].mtu not in ['9000B']", False),
        ("hosts[0].tcp.mss == none", True),
        ("true and (false or not false)", True),
    ],
)
def test_constraints_evaluate(text: str, expected: bool) -> None:
    assert holds(text) is expected


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("links[0].rate < '1GB'", "cannot compare '100Mbps' (a bandwidth) with '1GB' (a size)"),
        ("hosts[0].tcp.delayed_ack < '10ms'", "cannot order"),
        ("links[0].queue < '1000B'", "cannot order"),
        ("links[0].queue", "not true or false"),
        ("links[0].rate in '1Gbps'", "needs a list"),
    ],
)
def test_evaluation_errors_are_errors_not_false(text: str, reason: str) -> None:
    with pytest.raises(ConstraintError, match=reason.replace("(", r"\(").replace(")", r"\)")):
        holds(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "links[0].rate <",
        "(a == 1",
        "a == 1)",
        "a = 1",
        "a == 1 b == 2",
        "os.system('x')",
        "a + 1",
        "a[0 == 1",
    ],
)
def test_syntax_errors(text: str) -> None:
    with pytest.raises(ConstraintError):
        Constraint.parse(text)


def test_constraint_knobs() -> None:
    c = Constraint.parse(
        "links[0].rate >= 1Gbps or (links[0].mtu == '1500B' and links[0].rate < 1Gbps)"
    )
    assert c.knobs() == ["links[0].rate", "links[0].mtu"]


def test_quantities_mirror_the_core_units() -> None:
    assert parse_quantity("1Gbps") == parse_quantity("1000Mbps") == parse_quantity("125MB/s")
    assert parse_quantity("64KiB").value == 65536
    assert parse_quantity("1.2us").value == 1_200_000  # picoseconds
    assert parse_quantity("400MHz").kind == "frequency"
    assert parse_quantity("4KB") is None  # ambiguous in the core too
    assert parse_quantity("off") is None
    assert parse_quantity("1500") is None


def test_knob_paths() -> None:
    assert parse_knob("hosts[1].tcp.rx_buffer") == ["hosts", 1, "tcp", "rx_buffer"]
    assert parse_knob("a[0][2].b") == ["a", 0, 2, "b"]
    for bad in ["", "links[0]..rate", "links[-1].rate", "links.[0]", "1links", "links[0].rate "]:
        with pytest.raises(KnobError):
            parse_knob(bad)


def test_set_knob_creates_tables_but_not_array_entries() -> None:
    doc = {"hosts": [{"name": "a"}, {"name": "b"}]}
    set_knob(doc, "hosts[1].cpu.clock", "1GHz")
    set_knob(doc, "workload.bulk.bytes", "1MiB")
    assert doc == {
        "hosts": [{"name": "a"}, {"name": "b", "cpu": {"clock": "1GHz"}}],
        "workload": {"bulk": {"bytes": "1MiB"}},
    }
    assert get_knob(doc, "hosts[1].cpu.clock") == "1GHz"
    set_knob(doc, "hosts[1].cpu", None)  # none removes: the default applies
    assert doc["hosts"][1] == {"name": "b"}
    with pytest.raises(KnobError, match="out of range"):
        set_knob(doc, "hosts[2].name", "c")
    with pytest.raises(KnobError, match="not in the scenario"):
        set_knob(doc, "links[0].rate", "1Gbps")
    with pytest.raises(KnobError, match="not a table"):
        set_knob(doc, "hosts[0].name.first", "x")
