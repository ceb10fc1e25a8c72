"""Sweep constraints: a tiny, safe expression language over knob values.

Nothing in a sweep file is executed. A constraint is parsed by this module
into a small tree and evaluated against one candidate point; it can only
read knob values and compare them with literals::

    links[0].rate >= '1Gbps' or links[0].mtu == '1500B'
    not (hosts[0].tcp.congestion_control == 'none' and workload.bulk.bytes > 64MiB)
    hosts[1].profile in ['kurmann-pii-400', 'modern-x86-pcie']

Grammar (lowest precedence first)::

    expr       := and_expr ('or' and_expr)*
    and_expr   := not_expr ('and' not_expr)*
    not_expr   := 'not' not_expr | comparison
    comparison := operand (op operand)*          # chained like Python: a < b < c
    op         := '==' | '!=' | '<' | '<=' | '>' | '>=' | 'in' | 'not' 'in'
    operand    := KNOB | STRING | NUMBER | QUANTITY | 'true' | 'false' | 'none'
                | '[' operand (',' operand)* ']' | '(' expr ')'

A KNOB is a knob path (``hosts[1].tcp.rx_buffer``); a QUANTITY is a number
with its unit and no quotes (``64MiB``), the same as the string ``'64MiB'``.
Two strings that are both quantities of one kind (``'100Mbps'`` and
``'1Gbps'``) compare by value, so ``'1000Mbps' == '1Gbps'``; other strings
support only ``==`` and ``!=``. Comparing a bandwidth with a size, or
ordering a string against a number, is an error rather than silently false.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .knobs import KnobError, parse_knob
from .units import parse_quantity

Lookup = Callable[[str], Any]
"""Returns the value of a knob for the point being checked."""


class ConstraintError(ValueError):
    """A constraint that does not parse, or cannot be evaluated on a point."""

    def __init__(self, constraint: str, reason: str, position: int | None = None) -> None:
        where = f" at column {position + 1}" if position is not None else ""
        super().__init__(f"{reason}{where} in {constraint!r}")
        self.constraint = constraint
        self.reason = reason
        self.position = position


_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<op>==|!=|<=|>=|<|>)
  | (?P<punct>[()\[\],])
  | (?P<string>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
  | (?P<quantity>\d+(?:\.\d+)?[A-Za-zµ][A-Za-z/µ]*)
  | (?P<number>-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)
  | (?P<name>[A-Za-z_][A-Za-z0-9_-]*(?:\[\d+\])*(?:\.[A-Za-z_][A-Za-z0-9_-]*(?:\[\d+\])*)*)
    """,
    re.VERBOSE,
)

KEYWORDS = {"and", "or", "not", "in", "true", "false", "none"}


@dataclass(frozen=True)
class Token:
    kind: str
    text: str
    pos: int


def tokenize(text: str) -> list[Token]:
    """Split a constraint into tokens; anything unexpected is an error."""
    tokens: list[Token] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ConstraintError(text, f"unexpected character {text[pos]!r}", pos)
        kind = m.lastgroup or ""
        if kind != "space":
            word = m.group()
            if kind == "name" and word in KEYWORDS:
                kind = "keyword"
            tokens.append(Token(kind, word, pos))
        pos = m.end()
    tokens.append(Token("end", "", len(text)))
    return tokens


Node = tuple[Any, ...]
"""A parse tree node, a plain tuple: ``("lit", value)``, ``("knob", path)``,
``("list", [nodes])``, ``("not", node)``, ``("and" | "or", left, right)`` or
``("cmp", first, [(op, node), ...])``."""


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.i = 0

    def peek(self) -> Token:
        return self.tokens[self.i]

    def take(self) -> Token:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def accept(self, text: str) -> bool:
        tok = self.peek()
        if tok.kind in ("keyword", "op", "punct") and tok.text == text:
            self.i += 1
            return True
        return False

    def expect(self, text: str) -> None:
        if not self.accept(text):
            self.fail(f"expected {text!r}")

    def fail(self, reason: str) -> None:
        tok = self.peek()
        got = "the end" if tok.kind == "end" else repr(tok.text)
        raise ConstraintError(self.text, f"{reason}, got {got}", tok.pos)

    def parse(self) -> Node:
        node = self.expr()
        if self.peek().kind != "end":
            self.fail("expected 'and', 'or' or a comparison operator")
        return node

    def expr(self) -> Node:
        node = self.and_expr()
        while self.accept("or"):
            node = ("or", node, self.and_expr())
        return node

    def and_expr(self) -> Node:
        node = self.not_expr()
        while self.accept("and"):
            node = ("and", node, self.not_expr())
        return node

    def not_expr(self) -> Node:
        if self.peek().text == "not" and self.peek().kind == "keyword":
            self.take()
            return ("not", self.not_expr())
        return self.comparison()

    def comparison(self) -> Node:
        first = self.operand()
        rest: list[tuple[str, Any]] = []
        while True:
            tok = self.peek()
            if tok.kind == "op":
                self.take()
                rest.append((tok.text, self.operand()))
            elif tok.kind == "keyword" and tok.text == "in":
                self.take()
                rest.append(("in", self.operand()))
            elif (
                tok.kind == "keyword"
                and tok.text == "not"
                and self.tokens[self.i + 1].kind == "keyword"
                and self.tokens[self.i + 1].text == "in"
            ):
                self.i += 2
                rest.append(("not in", self.operand()))
            else:
                break
        return ("cmp", first, rest) if rest else first

    def operand(self) -> Node:
        tok = self.peek()
        if self.accept("("):
            node = self.expr()
            self.expect(")")
            return node
        if self.accept("["):
            items = [self.operand()]
            while self.accept(","):
                items.append(self.operand())
            self.expect("]")
            return ("list", items)
        if tok.kind == "string":
            self.take()
            return ("lit", re.sub(r"\\(.)", r"\1", tok.text[1:-1]))
        if tok.kind == "quantity":
            self.take()
            return ("lit", tok.text)
        if tok.kind == "number":
            self.take()
            is_int = re.fullmatch(r"-?\d+", tok.text) is not None
            return ("lit", int(tok.text) if is_int else float(tok.text))
        if tok.kind == "keyword" and tok.text in ("true", "false", "none"):
            self.take()
            return ("lit", {"true": True, "false": False, "none": None}[tok.text])
        if tok.kind == "name":
            self.take()
            try:
                parse_knob(tok.text)
            except KnobError as e:
                raise ConstraintError(self.text, e.reason, tok.pos) from None
            return ("knob", tok.text)
        self.fail("expected a knob path, a literal or '('")
        raise AssertionError("unreachable")


@dataclass(frozen=True)
class Constraint:
    """One parsed constraint; call :meth:`holds` on a point."""

    text: str
    tree: Any

    @classmethod
    def parse(cls, text: str) -> Constraint:
        if not isinstance(text, str):
            raise ConstraintError(str(text), "a constraint is a string")
        return cls(text, _Parser(text).parse())

    def knobs(self) -> list[str]:
        """The knob paths the constraint reads, in order of appearance."""
        found: list[str] = []

        def walk(node: Any) -> None:
            if node[0] == "knob":
                if node[1] not in found:
                    found.append(node[1])
            elif node[0] == "list":
                for item in node[1]:
                    walk(item)
            elif node[0] == "not":
                walk(node[1])
            elif node[0] in ("and", "or"):
                walk(node[1])
                walk(node[2])
            elif node[0] == "cmp":
                walk(node[1])
                for _, item in node[2]:
                    walk(item)

        walk(self.tree)
        return found

    def holds(self, lookup: Lookup) -> bool:
        """Whether the point whose knobs ``lookup`` reads satisfies the
        constraint."""
        value = _eval(self, self.tree, lookup)
        if not isinstance(value, bool):
            raise ConstraintError(
                self.text,
                f"the constraint is {value!r}, not true or false; compare it with a value",
            )
        return value


def _eval(c: Constraint, node: Any, lookup: Lookup) -> Any:
    kind = node[0]
    if kind == "lit":
        return node[1]
    if kind == "knob":
        return lookup(node[1])
    if kind == "list":
        return [_eval(c, item, lookup) for item in node[1]]
    if kind == "not":
        return not _truth(c, _eval(c, node[1], lookup))
    if kind == "and":
        return _truth(c, _eval(c, node[1], lookup)) and _truth(c, _eval(c, node[2], lookup))
    if kind == "or":
        return _truth(c, _eval(c, node[1], lookup)) or _truth(c, _eval(c, node[2], lookup))
    left = _eval(c, node[1], lookup)
    for op, item in node[2]:
        right = _eval(c, item, lookup)
        if not compare(c.text, op, left, right):
            return False
        left = right
    return True


def _truth(c: Constraint, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ConstraintError(c.text, f"{value!r} is not true or false; compare it with a value")
    return value


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def compare(text: str, op: str, a: Any, b: Any) -> bool:
    """``a op b`` under the constraint language's rules (see the module doc)."""
    if op in ("in", "not in"):
        if not isinstance(b, list):
            raise ConstraintError(text, f"'{op}' needs a list on its right, got {b!r}")
        found = any(compare(text, "==", a, item) for item in b)
        return found if op == "in" else not found
    if isinstance(a, str) and isinstance(b, str):
        qa, qb = parse_quantity(a), parse_quantity(b)
        if qa is not None and qb is not None:
            if qa.kind != qb.kind:
                raise ConstraintError(
                    text, f"cannot compare {a!r} (a {qa.kind}) with {b!r} (a {qb.kind})"
                )
            return _order(op, qa.value, qb.value)
        if op in ("==", "!="):
            return (a == b) == (op == "==")
        raise ConstraintError(
            text, f"cannot order {a!r} and {b!r}: they are not quantities of one kind"
        )
    if _is_number(a) and _is_number(b):
        return _order(op, a, b)
    if op in ("==", "!="):
        same = type(a) is type(b) and a == b
        return same == (op == "==")
    raise ConstraintError(text, f"cannot order {a!r} and {b!r}")


def _order(op: str, a: Any, b: Any) -> bool:
    if op == "==":
        return bool(a == b)
    if op == "!=":
        return bool(a != b)
    if op == "<":
        return bool(a < b)
    if op == "<=":
        return bool(a <= b)
    if op == ">":
        return bool(a > b)
    return bool(a >= b)
