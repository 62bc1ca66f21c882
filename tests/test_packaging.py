"""pyproject.toml installs every package, with a licence field the build does not warn about.

setuptools deprecated the ``license = { text = ... }`` table (a warning on every build since
77.0); the SPDX string it replaces needs ``setuptools>=77`` at build time. A package directory
without ``__init__.py``, or a package outside the ``packages.find`` patterns, would be missing
from a non-editable install while every test (run from the source tree) still passed.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from setuptools import find_packages

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
LIBRARY = ("protocols", "algorithms", "parties", "sim")


def test_licence_is_an_spdx_string_with_a_setuptools_that_reads_it() -> None:
    assert isinstance(PYPROJECT["project"]["license"], str)
    assert re.fullmatch(r"[A-Za-z0-9.\-+]+( (AND|OR|WITH) [A-Za-z0-9.\-+]+)*",
                        PYPROJECT["project"]["license"])
    requires = PYPROJECT["build-system"]["requires"]
    version = [re.match(r"setuptools>=(\d+)", r) for r in requires if r.startswith("setuptools")]
    assert version and version[0] and int(version[0].group(1)) >= 77


def test_every_library_directory_is_an_installed_package() -> None:
    include = PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"]
    found = set(find_packages(where=str(ROOT), include=include))
    with_code = {
        ".".join(p.relative_to(ROOT).parts)
        for top in LIBRARY for p in [ROOT / top, *(ROOT / top).rglob("*")]
        if p.is_dir() and "__pycache__" not in p.parts and any(p.glob("*.py"))
    }
    assert with_code <= found, f"not installed: {sorted(with_code - found)}"
    assert {"algorithms.data", "algorithms.nmf", "sim.experiments"} <= found
    assert all(name.split(".")[0] in LIBRARY for name in found)
