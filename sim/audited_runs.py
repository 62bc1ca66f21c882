"""What ``[[audit]]`` examines in an experiment that makes many runs.

A multi-run experiment (an initialisation comparison, a sweep over ε, a table of variants, a
baseline next to the secure protocol) has no single run to audit. It names instead each
*distinct* run it makes — one per arm or plan, at the experiment's own size, with the first
trial's seed — in :attr:`sim.entry.AlgorithmRun.audit_runs`:

* an arm whose protocol is meant to be secure gives an :class:`~sim.privacy.AuditTarget` (its
  parties and the declarations that judge them), audited like a single run;
* an arm that is non-private by design (a centralized baseline, a "revealing" variant, a
  local-only method) gives a :class:`RevealingRun`, reported as a ``leak`` that names what the
  arm reveals as its protocol declares it — no test is run, as there is nothing to find;
* an arm computed by a centralized reference that the protocol reproduces exactly (no
  messages at all) gives a :class:`ReferenceRun`: ``not applicable``, naming where the
  protocol's own run is audited.

Each ``[[audit]]`` then answers one verdict per audited run (the result's ``details["run"]``
names it), or for the single run ``run = "<arm>"`` names. A coalition study
(``coalitions``/``sizes``) on a multi-run experiment needs ``run``: one heat map per study.

This module imports nothing heavy (the catalogue's entries name their revealing arms at import).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from protocols.errors import ScenarioError

if TYPE_CHECKING:
    from parties.audit.result import AuditResult
    from sim.scenario import AuditSpec


@dataclass(frozen=True)
class RevealingRun:
    """An arm that reveals by design: what it reveals, and to whom (as its protocol declares).

    Attributes
    ----------
    reveals : str
        What the arm hands out beyond its secure outputs, e.g. ``"Σ (the singular values)"``.
    protocol : str
        The arm's protocol or method, as the report names it.
    """

    reveals: str
    protocol: str

    def result(self, coalition: tuple[int, ...], method: str) -> AuditResult:
        """The declared answer: a ``leak`` revealing what the arm reveals."""
        from parties.audit.result import LEAK, AuditResult

        return AuditResult(tuple(sorted(coalition)), method, LEAK, details={
            "reason": f"non-private by design: {self.protocol} reveals {self.reveals}",
            "declared": True})


@dataclass(frozen=True)
class ReferenceRun:
    """An arm computed by a centralized reference that the protocol reproduces exactly, not
    by a simulation: there are no messages to audit in this experiment.

    Attributes
    ----------
    protocol : str
        The protocol the reference stands for.
    audited_by : str
        Where that protocol's own run is audited (an entry or a shipped scenario).
    """

    protocol: str
    audited_by: str

    def result(self, coalition: tuple[int, ...], method: str) -> AuditResult:
        """``not applicable``, naming where the protocol is audited."""
        from parties.audit.result import NOT_APPLICABLE, AuditResult

        return AuditResult(tuple(sorted(coalition)), method, NOT_APPLICABLE, details={
            "reason": f"this arm runs the centralized reference of {self.protocol}, which the "
                      f"protocol reproduces exactly; no messages are exchanged to audit here — "
                      f"{self.protocol}'s own run is audited by {self.audited_by}"})


def audited_runs(runs: Mapping[str, Any], single: Any,
                 spec: AuditSpec, where: str) -> list[tuple[str | None, Any]]:
    """The runs one ``[[audit]]`` examines: ``(name, target)`` pairs.

    Parameters
    ----------
    runs : mapping of str to AuditTarget or RevealingRun
        The experiment's named runs (empty for a single-run algorithm).
    single : AuditTarget or None
        The single run's target.
    spec : AuditSpec
        The ``[[audit]]``; its ``run`` picks one named run.
    where : str
        ``"audit[i]"``, for messages.

    Raises
    ------
    ScenarioError
        A ``run`` that names no run of the experiment (listing the runs), ``run`` on a
        single-run algorithm, a study over several runs, or nothing to audit.
    """
    name = getattr(spec, "run", None)
    if not runs:
        if name is not None:
            raise ScenarioError(f"{where}.run = {name!r}: this algorithm makes one run; "
                                "remove run")
        if single is None:
            raise ScenarioError("this algorithm has no protocol to audit; remove [[audit]]")
        return [(None, single)]
    if name is not None:
        if name not in runs:
            raise ScenarioError(f"{where}.run = {name!r} names no run of this experiment; "
                                f"use one of {', '.join(sorted(runs))}")
        return [(name, runs[name])]
    if spec.study and len(runs) > 1:
        raise ScenarioError(f"{where} studies many coalitions over {len(runs)} runs; pick one "
                            f"with run = one of {', '.join(sorted(runs))}")
    return list(runs.items())


def labelled(result: AuditResult, name: str | None) -> AuditResult:
    """``result`` with the run it audited in its details (a single run is left unnamed)."""
    if name is not None:
        result.details["run"] = name
    return result
