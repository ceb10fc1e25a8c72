"""Probes: Python callables fed named events during a run, without changing
its result."""

from __future__ import annotations

import threading
import time
from collections import Counter
from typing import Callable

import pytest

import nicsim
from nicsim import ProbeEvent

from conftest import SCENARIOS

KURMANN = SCENARIOS / "kurmann-standard.toml"
EVENTS = ("frame", "deliver", "interrupt", "job", "call")


def count_by_host(name: str) -> tuple[Counter[str], dict[str, Callable[[ProbeEvent], None]]]:
    """A counter of events per host and a probes dict that fills it."""
    counts: Counter[str] = Counter()

    def probe(event: ProbeEvent) -> None:
        assert event.name == name
        counts[event.host] += 1

    return counts, {name: probe}


def test_event_names() -> None:
    assert nicsim.PROBE_EVENTS == EVENTS


def test_interrupt_probe_sees_every_nic_interrupt() -> None:
    counts, probes = count_by_host("interrupt")
    result = nicsim.run(KURMANN, probes=probes)
    nic = {h["name"]: h["timing"]["nic"]["interrupts"] for h in result.hosts}
    assert sum(nic.values()) > 0
    assert dict(counts) == nic


def test_frame_probe_sees_every_frame() -> None:
    counts, probes = count_by_host("frame")
    result = nicsim.run(KURMANN, probes=probes)
    assert sum(counts.values()) == result.summary["frames"] > 0
    sent = {h["name"]: h["tx_frames"] for h in result.hosts}
    assert dict(counts) == sent


def test_probes_never_change_the_result() -> None:
    seen: Counter[str] = Counter()

    def probe(event: ProbeEvent) -> None:
        seen[event.name] += 1

    plain = nicsim.run(KURMANN)
    probed = nicsim.run(KURMANN, probes={name: probe for name in EVENTS})
    assert set(seen) == set(EVENTS)
    assert probed.json == plain.json


def test_event_fields_and_time() -> None:
    events: list[ProbeEvent] = []
    nicsim.run(KURMANN, probes={"frame": events.append, "job": events.append})
    frame = next(e for e in events if e.name == "frame")
    assert frame.host in ("a", "b")
    assert set(frame.fields) == {"link", "direction", "bytes"}
    assert frame["bytes"] == frame.fields["bytes"] > 0
    # Ethernet header and a full 1500 B IP packet; no FCS.
    assert max(e["bytes"] for e in events if e.name == "frame") == 14 + 1500
    job = next(e for e in events if e.name == "job")
    assert set(job.fields) == {"core", "cycles", "class"}
    assert job["cycles"] > 0
    assert all(e.time_s == e.time_ps / 1e12 for e in events)
    times = [e.time_ps for e in events]
    assert times == sorted(times), "events arrive in simulated-time order"
    with pytest.raises(KeyError, match="no field"):
        frame["cycles"]
    assert "frame" in repr(frame)


def test_exception_in_a_probe_propagates_and_silences_later_calls() -> None:
    calls = 0

    def probe(event: ProbeEvent) -> None:
        nonlocal calls
        calls += 1
        raise RuntimeError(f"probe failed at {event.time_ps} ps")

    delivered = 0

    def count(event: ProbeEvent) -> None:
        nonlocal delivered
        delivered += 1

    with pytest.raises(RuntimeError, match="probe failed at") as info:
        nicsim.run(KURMANN, probes={"frame": probe, "deliver": count})
    assert not isinstance(info.value, nicsim.SimulationError)
    assert calls == 1
    # The run stops at the failing event: nothing more is delivered.
    assert delivered == 0


def test_unknown_probe_name_is_a_value_error() -> None:
    with pytest.raises(ValueError, match='unknown probe "frames"') as info:
        nicsim.run(KURMANN, probes={"frames": print})
    for name in EVENTS:
        assert name in str(info.value)


def test_probe_must_be_callable() -> None:
    with pytest.raises(TypeError, match='probe "frame" is not callable'):
        nicsim.run(KURMANN, probes={"frame": 1})  # type: ignore[dict-item]


def test_probed_run_releases_the_gil_between_calls() -> None:
    """Another thread keeps running while a run with a probe does."""
    calls: list[float] = []
    inside: list[float] = []

    def simulate() -> None:
        inside.append(time.perf_counter())
        nicsim.run(KURMANN, probes={"call": lambda e: calls.append(e.time_s)})
        inside.append(time.perf_counter())

    worker = threading.Thread(target=simulate)
    ticks: list[float] = []
    worker.start()
    while worker.is_alive():
        ticks.append(time.perf_counter())
        time.sleep(0.001)
    worker.join()
    start, end = inside
    assert calls
    assert sum(start < t < end for t in ticks) >= 10, f"run took {end - start:.3f} s"


def test_recorded_events_are_the_events_a_probe_sees() -> None:
    """`record` keeps in memory exactly the events a callable would get, row
    for row, and the run's result does not change."""
    seen: dict[str, list[ProbeEvent]] = {name: [] for name in EVENTS}

    def keep(event: ProbeEvent) -> None:
        seen[event.name].append(event)

    plain = nicsim.run(KURMANN)
    probed = nicsim.run(KURMANN, probes={name: keep for name in EVENTS}, record=EVENTS)
    recorded = nicsim.run(KURMANN, record=["job", "frame"])
    assert recorded.json == plain.json == probed.json
    assert sorted(recorded.records) == ["frame", "job"]
    assert sorted(probed.records) == sorted(EVENTS)
    frames = recorded.records["frame"]
    assert len(frames) == plain.summary["frames"] > 0
    assert list(frames.columns) == ["time_ps", "time_s", "host", "link", "direction", "bytes"]
    sent = {h["name"]: h["tx_frames"] for h in plain.hosts}
    assert frames.groupby("host", observed=True).size().to_dict() == sent
    for name in EVENTS:
        table = probed.records[name]
        events = seen[name]
        assert len(table) == len(events) > 0, name
        assert table["time_ps"].tolist() == [e.time_ps for e in events]
        assert table["host"].astype(str).tolist() == [e.host for e in events]
        for field in events[0].fields:
            assert table[field].tolist() == [e[field] for e in events], (name, field)
        assert table["time_ps"].is_monotonic_increasing
        assert (table["time_s"] == table["time_ps"] / 1e12).all()


def test_recording_on_an_ideal_pair_has_no_timed_events() -> None:
    result = nicsim.run(SCENARIOS / "gbe-rr.toml", record=["interrupt", "deliver"])
    assert len(result.records["interrupt"]) == 0
    assert list(result.records["interrupt"].columns) == ["time_ps", "time_s", "host", "core"]
    delivered = result.records["deliver"]
    assert len(delivered) > 0 and (delivered["bytes"] >= 42).all()
    assert nicsim.run(SCENARIOS / "gbe-rr.toml").records == {}


def test_record_names_are_checked() -> None:
    with pytest.raises(ValueError, match='unknown probe "frames"; probes are: frame, deliver'):
        nicsim.run(KURMANN, record=["frames"])
    with pytest.raises(TypeError, match="list of event names"):
        nicsim.run(KURMANN, record="frame")  # type: ignore[arg-type]
