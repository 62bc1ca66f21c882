"""DESIGN.md's package ladder, read from the source with :mod:`ast`.

::

    sim          → parties, algorithms, protocols
     └ parties   → algorithms, protocols
        └ algorithms → protocols
           └ protocols → (none of the four)

Every import counts — at module level, inside functions, under ``if TYPE_CHECKING:``, relative
imports, and ``importlib.import_module("...")`` / ``__import__("...")`` with a literal name.
Library code has no ``print(`` calls, and no module is a grab-bag named ``utils``, ``helpers``
or ``common``. Failures list every offending file and line.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LADDER = ("protocols", "algorithms", "parties", "sim")  # bottom to top
ALLOWED: dict[str, set[str]] = {
    "protocols": {"protocols"},
    "algorithms": {"algorithms", "protocols"},
    "parties": {"parties", "algorithms", "protocols"},
    "sim": {"sim", "parties", "algorithms", "protocols"},
}
GRAB_BAGS = {"utils", "helpers", "common", "util", "helper", "misc"}


def library_files() -> list[Path]:
    return sorted(p for pkg in LADDER for p in (ROOT / pkg).rglob("*.py"))


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts)


def imports_of(source: str, module: str, is_package: bool = False) -> list[tuple[int, str]]:
    """(line, imported module) for every import in ``source``, relative ones resolved."""
    tree = ast.parse(source)
    package = module if is_package else module.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".") if package else []
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                target = ".".join([*base, *([node.module] if node.module else [])])
                if not node.module:  # from . import x → the submodules x
                    found.extend((node.lineno, f"{target}.{a.name}".strip(".")) for a in node.names)
                    continue
                found.append((node.lineno, target))
            elif node.module:
                found.append((node.lineno, node.module))
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in ("import_module", "__import__") and node.args:
                arg = node.args[0]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    found.append((node.lineno, arg.value))
    return found


def ladder_violations(path: Path, source: str) -> list[str]:
    module = module_name(path)
    own = module.split(".")[0]
    out = []
    for line, target in imports_of(source, module, path.name == "__init__.py"):
        top = target.split(".")[0]
        if top in LADDER and top not in ALLOWED[own]:
            out.append(f"{path.relative_to(ROOT)}:{line}: {own} imports {target}")
    return out


def print_calls(path: Path, source: str) -> list[str]:
    return [
        f"{path.relative_to(ROOT)}:{node.lineno}: print(...)"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        and node.func.id == "print"
    ]


# -- the rules on the real code ------------------------------------------------------------


def test_the_four_packages_exist() -> None:
    for pkg in LADDER:
        assert (ROOT / pkg).is_dir(), pkg
        assert list((ROOT / pkg).rglob("*.py")), pkg


def test_every_import_respects_the_package_ladder() -> None:
    violations = [v for p in library_files()
                  for v in ladder_violations(p, p.read_text(encoding="utf-8"))]
    assert violations == [], "imports up the ladder:\n" + "\n".join(violations)


def test_no_print_in_library_code() -> None:
    violations = [v for p in library_files()
                  for v in print_calls(p, p.read_text(encoding="utf-8"))]
    assert violations == [], "print in library code:\n" + "\n".join(violations)


def import_graph() -> dict[str, set[str]]:
    """module → the library modules it imports (any import, ``from P import m`` as ``P.m``)."""
    modules = {module_name(p).removesuffix(".__init__"): p for p in library_files()}
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {(n.lineno, n.module): [a.name for a in n.names]
                 for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and not n.level}
        targets = set()
        for line, target in imports_of(path.read_text(encoding="utf-8"), module,
                                       path.name == "__init__.py"):
            subs = [f"{target}.{n}" for n in names.get((line, target), [])]
            found = [m for m in subs if m in modules] or ([target] if target in modules else [])
            targets.update(found)
        graph[module] = targets - {module}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_circles() -> None:
    """No module imports itself through others, lazily or not (DESIGN.md: imports run one way)."""
    assert cycles(import_graph()) == []


def test_the_catalogue_imports_no_run_code() -> None:
    """The declarations (sim.catalog) name their run code as "module:function" and never
    import it, lazily or not: listing the catalogue loads no experiment module."""
    graph = import_graph()
    found = sorted((m, t) for m, targets in graph.items()
                   if m == "sim.catalog" or m.startswith("sim.catalog.")
                   for t in targets if t.startswith("sim.experiments"))
    assert found == []


def test_cycle_finder_finds_planted_circles() -> None:
    graph = {"sim.catalog": {"sim.experiments"}, "sim.experiments": {"sim.entry", "sim.report"},
             "sim.report": {"sim.entry"}, "sim.entry": set()}
    assert cycles(graph) == []
    graph["sim.entry"] = {"sim.catalog"}
    assert cycles(graph) == [["sim.catalog", "sim.entry", "sim.experiments", "sim.report"]]
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"c"}}) == [["a", "b"]]


def test_no_grab_bag_modules() -> None:
    bad = [str(p.relative_to(ROOT)) for pkg in LADDER for p in (ROOT / pkg).rglob("*")
           if p.stem.lower() in GRAB_BAGS and (p.suffix == ".py" or p.is_dir())]
    assert bad == [], "grab-bag modules: " + ", ".join(bad)


# -- the checker catches what it must (planted violations) ---------------------------------


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        ("protocols/field/prime.py", "import sim.network\n", ["sim.network"]),
        ("protocols/field/prime.py", "from sim import network\n", ["sim"]),
        ("protocols/field/prime.py",
         "def f():\n    from parties.view import View\n    return View\n",
         ["parties.view"]),
        ("protocols/field/prime.py",
         "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from algorithms import data\n",
         ["algorithms"]),
        ("protocols/field/prime.py", "import importlib\nm = importlib.import_module('sim.cli')\n",
         ["sim.cli"]),
        ("protocols/field/prime.py", "m = __import__('parties')\n", ["parties"]),
        ("algorithms/data/dataset.py", "from ...sim import report\n", ["sim"]),
        ("algorithms/data/dataset.py", "from ... import parties\n", ["parties"]),
        ("algorithms/data/dataset.py", "from ..nmf import rri\n", []),
        ("parties/audit/simulation.py", "import sim\n", ["sim"]),
        ("parties/audit/__init__.py", "from sim.privacy import SimPyRunner\n", ["sim.privacy"]),
        ("parties/audit/compare.py", "from protocols.field import FixedPoint\nimport numpy\n", []),
        ("sim/cli.py", "from parties import audit\nfrom algorithms import data\n", []),
        ("algorithms/nmf/rri.py", "from .rri_steps import RRIParams\nfrom . import nndsvd\n", []),
    ],
)
def test_checker_flags_planted_violations(module: str, source: str,
                                          expected: list[str]) -> None:
    found = ladder_violations(ROOT / module, source)
    assert [f.rsplit(" imports ", 1)[1] for f in found] == expected
    assert all(f.startswith(module + ":") for f in found)  # the message names the file


def test_relative_imports_resolve_to_their_package() -> None:
    assert imports_of("from .field import x\n", "protocols.wire") == [(1, "protocols.field")]
    assert imports_of("from . import wire\n", "protocols", is_package=True) == [
        (1, "protocols.wire")]
    assert imports_of("from ..sim import y\n", "parties.audit") == [(1, "sim")]
    assert imports_of("from .calls import Layout\n", "parties.audit", is_package=True) == [
        (1, "parties.audit.calls")]


def test_print_checker_finds_nested_calls() -> None:
    source = "def f(x):\n    if x:\n        print('hi')\n    return x\n"
    assert print_calls(ROOT / "sim" / "x.py", source) == ["sim/x.py:3: print(...)"]
    assert print_calls(ROOT / "sim" / "x.py", "import sys\nsys.stdout.write('ok')\n") == []


# -- families inside protocols (DESIGN.md, "As the packages grow") -------------------------------

MODULE_LINES = 600
"""No library module grows past ~600 lines (DESIGN.md): split it along its jobs first."""

FAMILY_FLOOR = {
    # the prime fields stand on nothing but the error hierarchy
    "protocols.field": {"protocols.errors", "protocols.field"},
    # the crypto library on the fields (stream elements) and itself; the key agreement's setup
    # program also speaks the effects vocabulary
    "protocols.crypto": {"protocols.errors", "protocols.field", "protocols.crypto"},
}
FAMILY_EXTRA = {"protocols.crypto.key_agreement": {"protocols.context", "protocols.effects"}}


def test_no_library_module_over_the_size_limit() -> None:
    long = [f"{p.relative_to(ROOT)}: {n} lines"
            for p in library_files()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MODULE_LINES]
    assert not long, "split these modules along their jobs:\n" + "\n".join(long)


def test_field_and_crypto_families_import_only_below_them() -> None:
    bad = []
    for module, targets in import_graph().items():
        for family, allowed in FAMILY_FLOOR.items():
            if module != family and not module.startswith(family + "."):
                continue
            ok = allowed | FAMILY_EXTRA.get(module, set())
            bad += [f"{module} imports {t}" for t in sorted(targets)
                    if t.startswith("protocols") and not any(
                        t == a or t.startswith(a + ".") for a in ok)]
    assert not bad, "\n".join(bad)


def test_family_check_catches_a_planted_climb(monkeypatch: pytest.MonkeyPatch) -> None:
    graph = import_graph()
    graph["protocols.crypto.keystream"] = graph["protocols.crypto.keystream"] | {
        "protocols.context"}
    graph["protocols.field.prime"] = graph["protocols.field.prime"] | {"protocols.crypto.hkdf"}
    monkeypatch.setattr(sys.modules[__name__], "import_graph", lambda: graph)
    with pytest.raises(AssertionError) as caught:
        test_field_and_crypto_families_import_only_below_them()
    assert "protocols.crypto.keystream imports protocols.context" in str(caught.value)
    assert "protocols.field.prime imports protocols.crypto.hkdf" in str(caught.value)
