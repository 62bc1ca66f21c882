"""The claims table's machinery: a claim, what its run measured, shared scenario runs, and the
table's three renderings (text, JSON lines, the README's markdown).

A claim is one checkable statement of a seed paper (``shared/spec/seeds_digest.md`` §8, and
the experiment findings of seed 003's §4 and seed 004's §5.6 that §8 does not number). Its
``check`` runs the project's own code paths — the scenarios of ``scenarios/`` through
:func:`sim.runner.run_scenario`, or the library calls the tests make — and computes a status
from the measured figures:

* ``reproduced`` — the claim holds as stated at this scale;
* ``partly`` — some of it holds; the note says which part does not, or is not run;
* ``not reproduced`` — the measured figures contradict it;
* ``missing`` — nothing here measures it; the note says why.

A claim whose measurement takes more than about a minute is ``expensive``: ``quick=True``
skips its measurement and reports the status and figure of its last full measurement
(:mod:`sim.claims.recorded`), with a note saying so.
"""

from __future__ import annotations

import json
import os
import time
import tomllib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent
SCENARIOS = ROOT / "scenarios"
STATUSES = ("reproduced", "partly", "not reproduced", "missing")


@dataclass(frozen=True)
class Outcome:
    """What one claim's run measured."""

    status: str
    measured: str
    note: str = ""


@dataclass(frozen=True)
class Claim:
    """A checkable claim: where it is in the paper, what it says, and how it is measured.

    ``expensive`` claims have an outcome of their last full measurement in
    :data:`sim.claims.recorded.RECORDED`, which ``quick`` runs report instead of measuring.
    """

    id: str
    seed: str
    source: str
    paper: str
    tests: tuple[str, ...]
    check: Callable[[Runs], Outcome]
    expensive: bool = False


class Runs:
    """Scenario runs, each done once per set of overrides and shared between claims."""

    def __init__(self) -> None:
        self._done: dict[str, Any] = {}

    def scenario(self, name: str, drop_audits: bool = False, rows: int | None = None,
                 frac_bits: int | None = None, seed: int | None = None,
                 **algorithm: Any) -> Any:
        """The :class:`sim.runner.ScenarioRun` of ``scenarios/<name>.toml`` with overrides.

        ``algorithm`` overrides keys of ``[algorithm]``; ``rows`` that of ``[data]``;
        ``frac_bits`` that of ``[field]``; ``drop_audits`` removes the ``[[audit]]`` tables
        (for a claim about cost or outputs); ``seed`` replaces the scenario's seed (for a
        claim about a trend over data sets).
        """
        from sim.runner import run_scenario

        key = json.dumps([name, drop_audits, rows, frac_bits, seed, algorithm], sort_keys=True)
        if key not in self._done:
            spec = tomllib.loads((SCENARIOS / f"{name}.toml").read_text())
            spec["algorithm"].update(algorithm)
            if rows is not None:
                spec["data"]["rows"] = rows
            if frac_bits is not None:
                spec.setdefault("field", {})["frac_bits"] = frac_bits
            if drop_audits:
                spec.pop("audit", None)
            if seed is not None:
                spec["seed"] = seed
            self._done[key] = run_scenario(spec)
        return self._done[key]

    def metrics(self, name: str, drop_audits: bool = False, rows: int | None = None,
                frac_bits: int | None = None, seed: int | None = None,
                **algorithm: Any) -> dict[str, Any]:
        return self.scenario(name, drop_audits, rows, frac_bits, seed,
                             **algorithm).report["metrics"]


def status(holds: bool, partial: bool = False) -> str:
    """``reproduced`` if the claim holds and nothing of it is left out; ``partly`` if it holds
    in part (``holds`` with ``partial``, or ``partial`` alone); else ``not reproduced``."""
    if holds and not partial:
        return "reproduced"
    return "partly" if holds or partial else "not reproduced"


def fmt(x: float, digits: int = 3) -> str:
    return f"{x:.{digits}g}"


def cpu_seconds() -> float:
    """CPU seconds of this process and of its children that have ended (user and system)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def rows(claims: Sequence[Claim], ids: Sequence[str] | None = None, quick: bool = False,
         recorded: Mapping[str, Outcome] | None = None,
         runs: Runs | None = None) -> Iterator[dict[str, Any]]:
    """Run the claims (all, or those named), yielding one row per claim as it is done;
    ``quick`` takes the expensive ones' outcomes from ``recorded``. ``runs`` is the
    invocation's cache of scenario runs (a fresh one if not given).

    A row's ``seconds`` is its wall time and ``cpu_seconds`` the CPU time its process (and the
    processes it waited for) spent on it: on a shared machine the CPU seconds are the honest
    figure of its cost, the wall seconds that of its latency."""
    runs = Runs() if runs is None else runs
    for claim in claims:
        if ids and claim.id not in ids:
            continue
        start, start_cpu = time.perf_counter(), cpu_seconds()
        if quick and claim.expensive:
            if recorded is None or claim.id not in recorded:
                raise ValueError(f"{claim.id}: expensive claim without a recorded outcome")
            outcome = recorded[claim.id]
            note = "; ".join(x for x in (outcome.note, "not measured in this run (--quick): "
                                         "the status and figure last recorded") if x)
        else:
            outcome = claim.check(runs)
            note = outcome.note
        if outcome.status not in STATUSES:
            raise ValueError(f"{claim.id}: status {outcome.status!r}")
        yield {"id": claim.id, "seed": claim.seed, "source": claim.source,
               "paper": claim.paper, "status": outcome.status, "measured": outcome.measured,
               "note": note, "tests": list(claim.tests), "expensive": claim.expensive,
               "seconds": round(time.perf_counter() - start, 1),
               "cpu_seconds": round(cpu_seconds() - start_cpu, 1)}


def counts(table: Sequence[dict[str, Any]]) -> str:
    """``a reproduced, b partly, c not reproduced, d missing of n claims.``"""
    n = {s: sum(r["status"] == s for r in table) for s in STATUSES}
    return ", ".join(f"{n[s]} {s}" for s in STATUSES) + f" of {len(table)} claims."


def markdown(table: Sequence[dict[str, Any]]) -> str:
    """The README's reproduction table."""
    lines = ["| claim | source | paper | status | measured here |",
             "| --- | --- | --- | --- | --- |"]
    for r in table:
        measured = r["measured"] + (f". {r['note']}" if r["note"] else "")
        lines.append(f"| {r['id']} | seed {r['seed']} {r['source']} | {r['paper']} | "
                     f"{r['status']} | {measured} |".replace("\n", " "))
    lines.append("")
    lines.append(counts(table))
    return "\n".join(lines)


def text(table: Sequence[dict[str, Any]]) -> str:
    """The table for a terminal: a header line per claim, then what was measured."""
    out = []
    for r in table:
        out.append(f"{r['id']:<12} seed {r['seed']} {r['source']}: {r['status']} "
                   f"({r['seconds']:.1f} s, {r['cpu_seconds']:.1f} s CPU)")
        out.append(f"    paper:    {r['paper']}")
        out.append(f"    measured: {r['measured']}")
        if r["note"]:
            out.append(f"    note:     {r['note']}")
    out.append(counts(table))
    return "\n".join(out) + "\n"
