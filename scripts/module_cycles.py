"""Fail on an import cycle among nicsim-core's modules (issue #24).

Each file under crates/nicsim-core/src is a module (`a/mod.rs` is `a`,
`a/b.rs` is `a::b`). A module depends on another when its non-test code
names it by path (`crate::x::y`, `super::y`). Dependencies between a module
and its own parent or children are allowed (a parent re-exports its
children); any other cycle is reported with its path, and the script exits 1.

    python3 scripts/module_cycles.py            # check
    python3 scripts/module_cycles.py --graph    # print the top-level graph
    python3 scripts/module_cycles.py --src DIR  # another crate's src/
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "crates" / "nicsim-core" / "src"
PATH = re.compile(r"\b(crate|super)((?:::[a-z_][a-z0-9_]*)*)(::\{[^{}]*\})?")


def module_of(f: Path) -> tuple[str, ...]:
    rel = f.relative_to(SRC).with_suffix("")
    parts = rel.parts
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return tuple(parts)


def strip_tests(text: str) -> str:
    """Drop `#[cfg(test)] mod tests { ... }` blocks (and the rest of the file
    after a `#[cfg(test)]` module, which is where they sit)."""
    m = re.search(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{", text)
    code = text[: m.start()] if m else text
    # comments (docs name modules in links) are not dependencies
    return re.sub(r"//[^\n]*", "", code)


def edges(modules: dict[tuple[str, ...], str]) -> dict[tuple[str, ...], set[tuple[str, ...]]]:
    graph: dict[tuple[str, ...], set[tuple[str, ...]]] = {m: set() for m in modules}
    for mod, text in modules.items():
        for root, rest, group in PATH.findall(strip_tests(text)):
            names = rest.split("::")[1:]
            if root == "crate":
                base: tuple[str, ...] = ()
            else:
                # `super` names the parent of the module this file is
                base = mod[:-1]
                while names and names[0] == "super":
                    names = names[1:]
                    base = base[:-1]
            heads = [names]
            if group:
                # `use crate::a::{b, c::d}`: each first name of the group
                inner = [g.strip().split("::") for g in group[3:-1].split(",") if g.strip()]
                heads = [names + g for g in inner]
            for path in heads:
                target = base
                for n in path:
                    if target + (n,) in modules:
                        target = target + (n,)
                    else:
                        break
                if target == mod or not target:
                    continue
                # a parent and its descendants may name each other
                if target[: len(mod)] == mod or mod[: len(target)] == target:
                    continue
                graph[mod].add(target)
    return graph


def cycles(graph):
    """Strongly connected components with more than one module."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def top_level(graph):
    top: dict[str, set[str]] = {}
    for a, bs in graph.items():
        if not a:
            continue
        for b in bs:
            if b and a[0] != b[0]:
                top.setdefault(a[0], set()).add(b[0])
    return top


def main() -> int:
    global SRC
    if "--src" in sys.argv:
        SRC = Path(sys.argv[sys.argv.index("--src") + 1]).resolve()
    modules = {module_of(f): f.read_text() for f in sorted(SRC.rglob("*.rs"))}
    graph = edges(modules)
    top = top_level(graph)
    if "--graph" in sys.argv:
        for a in sorted(top):
            print(f"{a} -> {', '.join(sorted(top[a]))}")
    tgraph = {(a,): {(b,) for b in top.get(a, ())} for a in {m[0] for m in graph if m}}
    found = cycles(graph) + cycles(tgraph)
    for c in found:
        print("import cycle: " + " -> ".join("::".join(m) for m in c), file=sys.stderr)
    if found:
        return 1
    print(f"no import cycle among {len(modules)} modules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
