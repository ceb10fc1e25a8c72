"""`nicsim/_core.pyi` describes the native module exactly."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import nicsim
from nicsim import _core

STUB = Path(nicsim.__file__).parent / "_core.pyi"


def stub_tree() -> ast.Module:
    return ast.parse(STUB.read_text(encoding="utf-8"))


def stub_definitions() -> dict[str, ast.stmt]:
    return {
        node.name: node
        for node in stub_tree().body
        if isinstance(node, (ast.FunctionDef, ast.ClassDef))
    }


def stub_constants() -> dict[str, ast.AnnAssign]:
    return {
        node.target.id: node
        for node in stub_tree().body
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
    }


def test_stub_names_match_module() -> None:
    public = {name for name in dir(_core) if not name.startswith("_")}
    assert set(stub_definitions()) | set(stub_constants()) == public


def test_stub_all_lists_every_name() -> None:
    (all_node,) = [
        node
        for node in stub_tree().body
        if isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == ["__all__"]
    ]
    assert set(ast.literal_eval(all_node.value)) == set(stub_definitions()) | set(stub_constants())


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
        named = [p for p in actual.parameters.values() if p.kind != inspect.Parameter.VAR_KEYWORD]
        assert stub == [(p.name, p.default) for p in named], name
        # Keyword-only knobs in the stub stand for the function's **kwargs
        # (read by name, e.g. risc_simulate's core and line knobs).
        takes_kwargs = len(named) < len(actual.parameters)
        assert bool(node.args.kwonlyargs) == takes_kwargs, name


def test_stub_class_bases_match_module() -> None:
    for name, node in stub_definitions().items():
        if isinstance(node, ast.ClassDef):
            bases = [ast.unparse(base) for base in node.bases]
            actual = [b.__name__ for b in getattr(_core, name).__bases__ if b is not object]
            assert bases == actual, name


def test_stub_class_members_match_module() -> None:
    for name, node in stub_definitions().items():
        cls = getattr(_core, name)
        if not isinstance(node, ast.ClassDef) or issubclass(cls, BaseException):
            continue
        stub = {
            item.name
            for item in node.body
            if isinstance(item, ast.FunctionDef)
            and (not item.name.startswith("_") or item.name == "__getitem__")
        }
        actual = {
            member
            for member in vars(cls)
            if not member.startswith("_") or member == "__getitem__"
        }
        assert stub == actual, name


def test_stub_constant_types_match_module() -> None:
    for name, node in stub_constants().items():
        annotation = ast.unparse(node.annotation)
        value = getattr(_core, name)
        assert annotation.startswith(type(value).__name__), name
        if annotation == "tuple[str, ...]":
            assert all(isinstance(v, str) for v in value), name
