"""A scenario's ``[data]`` table: its vocabulary, its ranges and its validation.

Where a run's rows come from (``source``: synthetic, a file, scikit-learn's digits or a ratings
file), the keys each source takes, the documented range of every numeric key and the
partition of the rows over the parties. :mod:`sim.scenario` validates the rest of a scenario
and takes :data:`DATA_RANGES` into its :data:`~sim.scenario.RANGES`.
"""

from __future__ import annotations

import errno
from pathlib import Path
from typing import Any

from algorithms.vocabulary import SYNTHETIC_KINDS
from protocols.errors import ScenarioError
from sim.checks import check_choice, check_keys, check_ranged, shown

__all__ = ["DATA_KEYS", "DATA_OPEN_BELOW", "DATA_RANGES", "DATA_SOURCES", "FILE_FORMATS",
           "FILE_KEYS", "RATINGS_KEYS", "SYNTHETIC_KEYS", "SYNTHETIC_KINDS", "validate_data"]

SYNTHETIC_KEYS = {"rows", "cols", "kind", "k", "density", "noise", "doc_length", "alpha", "beta"}
FILE_KEYS = {"path", "format", "vocab"}
RATINGS_KEYS = {"source", "partition", "path"}
DATA_KEYS = {"source", "partition"} | SYNTHETIC_KEYS | FILE_KEYS
DATA_SOURCES = ("synthetic", "file", "digits", "ratings")
FILE_FORMATS = ("npy", "npz", "csv", "uci", "movielens")

DATA_RANGES: dict[str, tuple[float | None, float | None]] = {
    "data.rows": (1, 100_000_000),
    "data.cols": (1, 10_000_000),
    "data.k": (1, 10_000),
    "data.doc_length": (1, 1_000_000),
    "data.alpha": (0.0, 1000.0),  # lower bound excluded
    "data.beta": (0.0, 1000.0),  # lower bound excluded
    "data.density": (0.0, 1.0),  # lower bound excluded
    "data.noise": (0.0, 10.0),
}
"""The documented range of every numeric ``[data]`` key (bounds included unless noted)."""
DATA_OPEN_BELOW = {"data.alpha", "data.beta", "data.density"}
"""The ``[data]`` keys whose lower bound is excluded."""


def _data_ranged(name: str, value: Any) -> Any:
    return check_ranged(name, value, DATA_RANGES, DATA_OPEN_BELOW)


def validate_data(data: dict[str, Any], base: Path, n_parties: int) -> dict[str, Any]:
    """``[data]`` checked: its keys for its source, its ranges, its files (relative to
    ``base``, the scenario's folder) and its partition over ``n_parties`` parties."""
    check_keys("data", data, DATA_KEYS)
    source = check_choice("data.source", data.get("source", "synthetic"), DATA_SOURCES)
    out = dict(data)
    out["source"] = source
    if source == "ratings":  # a user,item,rating CSV or MovieLens ratings.dat
        extra = sorted(set(data) - RATINGS_KEYS)
        if extra:
            raise ScenarioError(
                f"data.{extra[0]} is not used with source = 'ratings'; its keys are "
                f"{', '.join(sorted(RATINGS_KEYS))}"
            )
        if "path" not in data:
            raise ScenarioError(
                "[data] source = 'ratings' needs 'path', a user,item,rating CSV or a MovieLens "
                "ratings.dat file"
            )
    elif source == "digits":  # scikit-learn's bundled digits: nothing to configure
        extra = sorted(set(data) - {"source", "partition"})
        if extra:
            raise ScenarioError(
                f"data.{extra[0]} is not used with source = 'digits' (a fixed 1,797 × 64 data "
                "set); only 'partition' may be given"
            )
    other = FILE_KEYS if source == "synthetic" else SYNTHETIC_KEYS
    misplaced = sorted(set(data) & other)
    if misplaced:
        use = "file" if source == "synthetic" else "synthetic"
        why = "" if source == "synthetic" else "; the file gives the data's shape"
        raise ScenarioError(
            f"data.{misplaced[0]} is only used with source = '{use}'{why}; remove it or set "
            f"data.source = '{use}'"
        )
    if source == "synthetic":
        for key in ("rows", "cols"):
            if key not in data:
                raise ScenarioError(f"[data] source = 'synthetic' needs '{key}'")
            out[key] = _data_ranged(f"data.{key}", data[key])
        if "kind" in data:  # otherwise the algorithm's own kind of synthetic data
            out["kind"] = check_choice("data.kind", data["kind"], SYNTHETIC_KINDS)
        for key in ("k", "density", "noise", "doc_length", "alpha", "beta"):
            if key in data:
                out[key] = _data_ranged(f"data.{key}", data[key])
    elif source == "ratings":
        out["path"] = _existing_file("data.path", data["path"], base)
    elif source == "file":
        if "path" not in data:
            raise ScenarioError("[data] source = 'file' needs 'path'")
        out["path"] = _existing_file("data.path", data["path"], base)
        if "format" in data:
            out["format"] = check_choice("data.format", data["format"], FILE_FORMATS)
        if "vocab" in data:
            out["vocab"] = _existing_file("data.vocab", data["vocab"], base)
    partition = data.get("partition", "equal")
    if partition != "equal":
        if not isinstance(partition, list) or not all(
            isinstance(c, int) and not isinstance(c, bool) for c in partition
        ):
            raise ScenarioError(
                f"data.partition = {shown(partition)} must be 'equal' or a list of row counts"
            )
        if len(partition) != n_parties:
            raise ScenarioError(
                f"data.partition has {len(partition)} counts but network.parties = {n_parties}; "
                "give one row count per party"
            )
        if any(c < 1 for c in partition):
            raise ScenarioError(f"data.partition = {shown(partition)}: every party needs ≥ 1 row")
        if source == "synthetic" and sum(partition) != out["rows"]:
            raise ScenarioError(
                f"data.partition sums to {sum(partition)} rows but data.rows = {out['rows']}"
            )
    out["partition"] = partition
    return out


def _existing_file(name: str, value: Any, base: Path) -> Path:
    if not isinstance(value, str) or not value:
        raise ScenarioError(f"{name} = {shown(value)} must be a file path")
    try:
        resolved = (base / value).resolve()
    except (RuntimeError, OSError) as exc:  # RuntimeError: a symlink loop (Python < 3.13)
        loop = isinstance(exc, RuntimeError) or exc.errno == errno.ELOOP
        why = "a symbolic link that leads back to itself" if loop else (exc.strerror or exc)
        raise ScenarioError(
            f"{name} = {value!r}: {str(base / value)!r} cannot be resolved ({why}); point it "
            "at the data file"
        ) from None
    if not resolved.is_file():
        what = "is a directory" if resolved.is_dir() else "does not exist"
        raise ScenarioError(
            f"{name} = {value!r}: {str(resolved)!r} {what}; paths are relative to the scenario "
            "file"
        )
    return resolved
