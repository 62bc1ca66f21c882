"""Checks on the values a user gives: scenario keys, algorithm keys, command-line arguments.

Every check raises :class:`~protocols.errors.ScenarioError` with one line that names the key,
shows the value (abbreviated when long) and states the allowed range, so that the user knows
what to change. The callable checks (:class:`Integer`, :class:`Number`, :class:`Choice`) also
*describe* their range, which is how ``mpcsim list`` and the README document every key.

This module imports nothing heavy: the command line's ``--help`` and ``list`` load it.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from protocols.errors import ScenarioError

__all__ = [
    "MAX_PARTIES",
    "Boolean",
    "Choice",
    "Described",
    "Integer",
    "Number",
    "check_choice",
    "check_int",
    "check_keys",
    "check_number",
    "check_ranged",
    "read_scenario_file",
    "shown",
]

MAX_SHOWN = 40
"""Longest value shown verbatim in a message; longer ones are abbreviated."""
MAX_PARTIES = 10_000
"""Most parties a scenario may declare (``network.parties``), and the bound of the algorithm
keys that count parties."""


def shown(value: Any) -> str:
    """``repr(value)`` for a message, abbreviated in the middle when it is long."""
    text = repr(value)
    if len(text) <= MAX_SHOWN:
        return text
    digits = sum(ch.isdigit() for ch in text)
    what = f"{digits} digits" if digits > len(text) // 2 else f"{len(text)} characters"
    return f"{text[:16]}…{text[-8:]} ({what})"


def _fmt(x: float) -> str:
    if isinstance(x, int) or (float(x).is_integer() and abs(x) < 1e15):
        return str(int(x))
    return f"{x:g}"


def _range_text(low: float | None, high: float | None, strict_low: bool = False,
                strict_high: bool = False, name: str = "x") -> str:
    parts = []
    if low is not None:
        parts.append(f"{_fmt(low)} {'<' if strict_low else '≤'} ")
    parts.append(name)
    if high is not None:
        parts.append(f" {'<' if strict_high else '≤'} {_fmt(high)}")
    return "".join(parts)


def read_scenario_file(path: str | Path) -> dict[str, Any]:
    """The TOML table of a scenario file, or a ScenarioError naming the file and the problem.

    The command line calls it first, so that a missing or malformed scenario file is reported
    before the simulator is imported.
    """
    if not str(path).strip():
        raise ScenarioError("the scenario path is empty; give a scenario TOML file")
    path = Path(path)
    if not path.exists():
        raise ScenarioError(f"scenario file {str(path)!r} does not exist")
    if not path.is_file():
        raise ScenarioError(f"scenario file {str(path)!r} is a directory, not a TOML file")
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"scenario file {str(path)!r} is not valid TOML: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"scenario file {str(path)!r} is not UTF-8 text") from exc
    except OSError as exc:
        raise ScenarioError(
            f"scenario file {str(path)!r} cannot be read ({exc.strerror or exc})"
        ) from exc


def check_int(name: str, value: Any, low: int | None = None, high: int | None = None) -> int:
    """``value`` as an integer in [low, high], or a ScenarioError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ScenarioError(f"{name} = {shown(value)} must be an integer")
    if (low is not None and value < low) or (high is not None and value > high):
        key = name.rsplit(".", 1)[-1]
        raise ScenarioError(
            f"{name} = {shown(value)} is out of range; allowed: {_range_text(low, high, name=key)}"
        )
    return value


def check_number(
    name: str,
    value: Any,
    low: float | None = None,
    strict: bool = False,
    high: float | None = None,
    strict_high: bool = False,
) -> float:
    """``value`` as a finite float in range (``strict``: ``low`` excluded), or a ScenarioError."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ScenarioError(f"{name} = {shown(value)} must be a number")
    try:
        v = float(value)
    except OverflowError:
        v = math.inf
    if not math.isfinite(v):
        raise ScenarioError(f"{name} = {shown(value)} must be a finite number")
    too_low = low is not None and (v <= low if strict else v < low)
    too_high = high is not None and (v >= high if strict_high else v > high)
    if too_low or too_high:
        key = name.rsplit(".", 1)[-1]
        allowed = _range_text(low, high, strict, strict_high, name=key)
        raise ScenarioError(f"{name} = {shown(value)} is out of range; allowed: {allowed}")
    return v


def check_choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    """``value`` if it is one of ``choices``, or a ScenarioError listing them."""
    if not isinstance(value, str) or value not in choices:
        raise ScenarioError(f"{name} = {shown(value)} is unknown; use one of {', '.join(choices)}")
    return value


@dataclass(frozen=True)
class Integer:
    """A check that a key is an integer in [low, high]."""

    low: int | None = None
    high: int | None = None

    def __call__(self, name: str, value: Any) -> int:
        return check_int(name, value, self.low, self.high)

    def describe(self) -> str:
        """The allowed range, e.g. ``"integer, 1 ≤ k ≤ 10000"``."""
        return "integer, " + _range_text(self.low, self.high, name="x")


@dataclass(frozen=True)
class Number:
    """A check that a key is a finite number in a range (``strict``: bound excluded)."""

    low: float | None = None
    high: float | None = None
    strict_low: bool = False
    strict_high: bool = False

    def __call__(self, name: str, value: Any) -> float:
        return check_number(name, value, self.low, self.strict_low, self.high, self.strict_high)

    def describe(self) -> str:
        """The allowed range, e.g. ``"number, 0 ≤ x ≤ 1000000"``."""
        return "number, " + _range_text(self.low, self.high, self.strict_low, self.strict_high)


@dataclass(frozen=True)
class Choice:
    """A check that a key is one of the given strings."""

    options: tuple[str, ...]

    def __call__(self, name: str, value: Any) -> str:
        return check_choice(name, value, self.options)

    def describe(self) -> str:
        """The allowed values, e.g. ``"prg | explicit"``."""
        return " | ".join(self.options)


@dataclass(frozen=True)
class Boolean:
    """A check that a key is true or false (TOML booleans only, not 0/1 or "yes")."""

    def __call__(self, name: str, value: Any) -> bool:
        if not isinstance(value, bool):
            raise ScenarioError(f"{name} = {shown(value)} must be true or false")
        return value

    def describe(self) -> str:
        """The allowed values."""
        return "true | false"


@dataclass(frozen=True)
class Described:
    """Any check, with the allowed values written out for ``mpcsim list`` and the README.

    For checks that do more than one range (``"auto"`` or a number, an optional key, a list),
    where :class:`Integer`, :class:`Number` and :class:`Choice` cannot say it alone.
    """

    check: Callable[[str, Any], Any]
    allowed: str

    def __call__(self, name: str, value: Any) -> Any:
        return self.check(name, value)

    def describe(self) -> str:
        """The allowed values, as given."""
        return self.allowed


def check_keys(table: str, given: Any, allowed: set[str]) -> None:
    """Refuse keys of ``given`` outside ``allowed``, naming the table (``""``: the top level)."""
    extra = sorted(set(given) - allowed)
    if extra:
        where = f"[{table}]" if table else "the top level"
        raise ScenarioError(
            f"unknown key{'s' if len(extra) > 1 else ''} {', '.join(map(repr, extra))} in "
            f"{where}; allowed: {', '.join(sorted(allowed))}"
        )


def check_ranged(name: str, value: Any, ranges: dict[str, tuple[float | None, float | None]],
                 open_below: set[str]) -> Any:
    """Check ``value`` against ``ranges[name]`` (integers for integral bounds; the lower bound
    excluded for the names in ``open_below``)."""
    low, high = ranges[name]
    if isinstance(low, int) and isinstance(high, int):
        return check_int(name, value, low, high)
    return check_number(name, value, low, name in open_below, high)
