"""Progress: the core's callback sees the run advance and changes nothing;
the bar draws only on a terminal."""

from __future__ import annotations

import io
import re
from pathlib import Path

from conftest import SCENARIOS, run_cli

import nicsim
from nicsim.progress import ProgressBar

NETPIPE = (
    (SCENARIOS / "gbe-netpipe.toml")
    .read_text(encoding="utf-8")
    .replace('upper = "8MiB"', 'upper = "64KiB"\nrun_time = "2ms"', 1)
)


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_callback_changes_nothing_and_counts_block_sizes() -> None:
    seen: list[tuple[float, int, int | None, int]] = []
    with_progress = nicsim.run(NETPIPE, progress=lambda *a: seen.append(a))
    plain = nicsim.run(NETPIPE)
    assert with_progress.json == plain.json
    assert len(seen) >= 2
    sizes = len(plain.netpipe or [])
    for sim_time_s, done, total, events in seen:
        assert total == sizes, "the schedule up to 64 KiB is known in advance"
        assert 0 <= done <= sizes
        assert 0 < sim_time_s <= plain.summary["sim_time_s"]
    assert [s[1] for s in seen] == sorted(s[1] for s in seen)
    assert [s[3] for s in seen] == sorted(s[3] for s in seen)


def test_the_bar_draws_on_a_terminal_only() -> None:
    tty, pipe = Terminal(), io.StringIO()
    for stream in (tty, pipe):
        bar = ProgressBar("netpipe", "block sizes", stream=stream, delay=0.0)
        bar(1.5, 12, 48, 1000)
        bar.close()
    drawn = tty.getvalue()
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", drawn)
    assert "12/48 block sizes" in text and "25%" in text
    assert "simulated 1.500 s" in text
    assert "\x1b[2K" in drawn.rsplit("simulated 1.500 s", 1)[1], "the bar is erased at the end"
    assert pipe.getvalue() == ""


def test_the_bar_waits_for_its_delay() -> None:
    tty = Terminal()
    bar = ProgressBar("x", stream=tty, delay=3600.0)
    bar(1.0, 1, 2, 10)
    bar.close()
    assert tty.getvalue() == ""


def test_the_plain_line_counts_and_shares() -> None:
    bar = ProgressBar("netpipe", "block sizes", stream=io.StringIO())
    assert bar.line(1.5, 12, 48) == "netpipe 12/48 block sizes (25 %) | simulated 1.500 s"
    assert bar.line(0.25, 7, None) == "netpipe 7 block sizes done | simulated 0.250 s"


def test_captured_cli_output_has_no_progress(tmp_path: Path) -> None:
    scenario = tmp_path / "np.toml"
    scenario.write_text(NETPIPE, encoding="utf-8")
    done = run_cli("run", scenario, "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert "simulated" not in done.stdout.replace("simulated time", "")
