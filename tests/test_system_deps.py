"""`make test` sets itself up with scripts/system-deps: with every tool
present it does nothing; with tools missing and no right to install them it
names the packages and fails (never a silent skip)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import REPO

SCRIPT = REPO / "scripts" / "system-deps"


def test_nothing_to_do_when_every_tool_is_there() -> None:
    # The test run itself needs them, so they are installed here.
    done = subprocess.run([str(SCRIPT), "test"], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_missing_tools_without_the_right_to_install_them_fail_with_their_names() -> None:
    # A PATH holding only `id`: tshark and tcpdump (in /usr/bin) are not on
    # it, nor is sudo; ethtool and ip are found in /usr/sbin, which the
    # script adds. Run as `nobody` when the tests run as root.
    with tempfile.TemporaryDirectory() as tmp:
        bin_dir = Path(tmp)
        os.chmod(bin_dir, 0o755)
        (bin_dir / "id").symlink_to(shutil.which("id"))
        # A copy nobody can read wherever the repository is.
        script = bin_dir / "system-deps"
        shutil.copy(SCRIPT, script)
        os.chmod(script, 0o755)
        command = ["/bin/bash", str(script), "test"]
        if os.geteuid() == 0:
            runuser = shutil.which("runuser", path=os.environ["PATH"] + ":/usr/sbin:/sbin")
            if runuser is None:
                pytest.fail("runuser (util-linux) is needed to run the script as an unprivileged user")
            command = [runuser, "-u", "nobody", "--", "/usr/bin/env", f"PATH={bin_dir}", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=60,
                              env={**os.environ, "PATH": str(bin_dir)})  # fmt: skip
        assert done.returncode == 1, done
    assert "missing system packages: tshark tcpdump" in done.stderr
    assert "apt-get install tshark tcpdump" in done.stderr
    assert done.stdout == ""
