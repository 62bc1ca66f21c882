"""The README's layout tour matches the folders: every module and sub-package of the four
library packages is named in its package's row of the README's package table, and every
module-like name in a row is a module or sub-package of that package."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("protocols", "algorithms", "parties", "sim")
MODULE_NAME = re.compile(r"[a-z][a-z0-9_]*(/[a-z][a-z0-9_]*)*/?")


def table_row(package: str) -> str:
    """The package table's row for ``package`` (its first cell is `` `package/` ``)."""
    rows = [line for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
            if line.startswith(f"| `{package}/` |")]
    assert len(rows) == 1, f"README.md has {len(rows)} package-table rows for {package}/"
    return rows[0].split("|", 2)[2]


def named(package: str) -> set[str]:
    """The module-like names in backticks in the package's row (`mpc/simulator` counts as
    `simulator`; `field/` as the sub-package `field/`)."""
    out = set()
    for token in re.findall(r"`([^`]+)`", table_row(package)):
        if MODULE_NAME.fullmatch(token):
            last = token.rstrip("/").rsplit("/", 1)[-1]
            out.add(last + "/" if token.endswith("/") else last)
    return out


def on_disk(package: str) -> set[str]:
    """Every module (by name) and sub-package (``name/``) under the package."""
    base = ROOT / package
    out = set()
    for path in base.rglob("*.py"):
        if "__pycache__" in path.parts:
            continue
        if path.parent != base:  # a package, or a namespace package (protocols/crypto/)
            out.add(path.parent.name + "/")
        if path.name != "__init__.py":
            out.add(path.stem)
    return out


@pytest.mark.parametrize("package", PACKAGES)
def test_every_module_is_named_in_the_readme_tour(package: str) -> None:
    missing = sorted(on_disk(package) - named(package))
    assert not missing, (f"README.md's {package}/ row does not name: "
                         + ", ".join(missing))


@pytest.mark.parametrize("package", PACKAGES)
def test_every_module_named_in_the_tour_exists(package: str) -> None:
    disk = on_disk(package)
    stale = sorted(n for n in named(package)
                   if n not in disk and n.rstrip("/") not in disk and n + "/" not in disk)
    assert not stale, (f"README.md's {package}/ row names what {package}/ does not hold: "
                       + ", ".join(stale))
