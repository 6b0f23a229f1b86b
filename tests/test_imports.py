"""``import toptwo`` loads the core only, and no toptwo module imports itself in a cycle.

The core is the model, the response matrix, the binary conversion and both algorithms
of the paper (with their private machinery); TopTwoEM, the baselines, the extensions and
everything else load on first use. Cycles are looked for in the source (every import,
at module level or inside a function, and the ``__init__`` of every package an import
passes through), so a lazy import inside a function cannot hide one.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import toptwo

#: The modules ``import toptwo`` loads. A new core module goes here; anything else must
#: load on first use (``toptwo.__getattr__``).
CORE = {"toptwo", "toptwo._base", "toptwo._batched", "toptwo._chunks", "toptwo._cost", "toptwo._components",
        "toptwo._frames", "toptwo._gate", "toptwo._linalg", "toptwo._pooled",
        "toptwo._result", "toptwo._split", "toptwo._startup", "toptwo._step2", "toptwo._ties",
        "toptwo._validation", "toptwo.binary", "toptwo.metrics", "toptwo.mle",
        "toptwo.model", "toptwo.reliability", "toptwo.responses", "toptwo.spectral"}


def _loaded(body: str) -> set[str]:
    code = (f"import json, sys\n{body}\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'toptwo')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)),
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(proc.stdout.strip().splitlines()[-1]))


def test_import_toptwo_loads_the_core_only():
    loaded = _loaded("import toptwo")
    assert loaded == CORE, (f"not core: {sorted(loaded - CORE)}; "
                            f"core not loaded: {sorted(CORE - loaded)}")


def test_toptwoem_and_the_baselines_load_on_first_use():
    loaded = _loaded("import toptwo\ntoptwo.TopTwoEM\ntoptwo.MajorityVote")
    assert {"toptwo.extensions.em", "toptwo.baselines"} <= loaded
    assert "TopTwoEM" in dir(toptwo)


# ------------------------------------------------------------------ import cycles
def _import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> toptwo modules it imports (anywhere in its code, TYPE_CHECKING aside)."""
    mods = {}
    for f in root.rglob("*.py"):
        parts = list(f.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = f
    graph: dict[str, set[str]] = {}
    for mod, f in mods.items():
        tree = ast.parse(f.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                node.body = []                           # annotations only, never run
        out: set[str] = set()
        pkg = mod.split(".") if f.name == "__init__.py" else mod.split(".")[:-1]
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = (".".join(pkg[:len(pkg) - node.level + 1] + [node.module or ""])
                        .rstrip(".") if node.level else node.module or "")
                for a in node.names:
                    target = f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base
                    out.add(target)
            elif isinstance(node, ast.Import):
                out.update(a.name for a in node.names)
        # importing a.b.c runs the __init__ of a and of a.b first
        for target in list(out):
            parts = target.split(".")
            out.update(".".join(parts[:i]) for i in range(1, len(parts)))
        graph[mod] = {t for t in out if t in mods and t != mod
                      and not mod.startswith(t + ".")}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
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
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle_in_the_package():
    graph = _import_graph(Path(toptwo.__file__).parent)
    assert "toptwo.reliability" in graph["toptwo.mle"]          # the graph sees imports
    assert _cycles(graph) == []


def test_the_cycle_check_can_fail(tmp_path):
    pkg = tmp_path / "toptwo"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .b import f\n")
    (pkg / "b.py").write_text("def f():\n    from .a import g\n")      # inside a function
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\n"
                              "if TYPE_CHECKING:\n    from .a import g\n")
    assert _cycles(_import_graph(pkg)) == [["toptwo.a", "toptwo.b"]]
