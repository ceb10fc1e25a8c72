"""`nicsim/_core.pyi` describes the native module exactly."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import nicsim
from nicsim import _core

STUB = Path(nicsim.__file__).parent / "_core.pyi"


def stub_definitions() -> dict[str, ast.stmt]:
    tree = ast.parse(STUB.read_text(encoding="utf-8"))
    return {
        node.name: node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))
    }


def test_stub_names_match_module() -> None:
    public = {name for name in dir(_core) if not name.startswith("_")}
    assert set(stub_definitions()) == public


def test_stub_signatures_match_module() -> None:
    for name, node in stub_definitions().items():
        if not isinstance(node, ast.FunctionDef):
            continue
        actual = inspect.signature(getattr(_core, name))
        args = node.args.args
        defaults = [None] * (len(args) - len(node.args.defaults)) + list(node.args.defaults)
        stub = [
            (arg.arg, inspect.Parameter.empty if default is None else ast.literal_eval(default))
            for arg, default in zip(args, defaults)
        ]
        assert stub == [(p.name, p.default) for p in actual.parameters.values()], name


def test_stub_exception_bases_match_module() -> None:
    for name, node in stub_definitions().items():
        if isinstance(node, ast.ClassDef):
            bases = [ast.unparse(base) for base in node.bases]
            assert bases == [b.__name__ for b in getattr(_core, name).__bases__], name
