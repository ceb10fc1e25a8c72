"""The Rust core's modules import one another one way (issue #24): the
check scripts/module_cycles.py runs finds no cycle in the core, and does
find the cycles planted in a small crate."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "module_cycles.py"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True)


def test_the_core_has_no_import_cycle():
    r = run()
    assert r.returncode == 0, r.stderr
    assert "no import cycle" in r.stdout


def write(root: Path, files: dict) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_a_cycle_between_two_components_is_found(tmp_path):
    src = write(
        tmp_path,
        {
            "lib.rs": "pub mod a;\npub mod b;\n",
            "a/mod.rs": "use crate::b::Thing;\n",
            "b/mod.rs": "pub struct Thing;\nuse crate::a;\n",
        },
    )
    r = run("--src", str(src))
    assert r.returncode == 1
    assert "import cycle: a -> b" in r.stderr


def test_grouped_uses_supers_and_test_modules(tmp_path):
    # `use super::{x, y}` counts; names in comments and #[cfg(test)] modules do not.
    src = write(
        tmp_path,
        {
            "lib.rs": "pub mod p;\npub mod q;\n",
            "p/mod.rs": "pub mod inner;\n// crate::q::Z is only a comment\n"
            "#[cfg(test)]\nmod tests {\n    use crate::q::Z;\n}\n",
            "p/inner.rs": "use super::super::{q};\n",
            "q/mod.rs": "pub struct Z;\n",
        },
    )
    r = run("--src", str(src), "--graph")
    assert r.returncode == 0, r.stderr
    assert "p -> q" in r.stdout
    # and q does not depend on p, so adding that edge makes a cycle
    (src / "q" / "mod.rs").write_text("pub struct Z;\nuse crate::p::inner;\n")
    assert run("--src", str(src)).returncode == 1
