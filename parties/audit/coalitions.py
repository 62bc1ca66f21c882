"""Coalition studies: the verdicts of many coalitions, and the largest t that is private.

A protocol is t-private when every coalition of at most t parties learns nothing beyond its
inputs and outputs (Qian et al., seed 004, Def. 1; SecureSum is declared (M − 1)-private,
thesis seed 001, §2.2). A study audits a set of coalitions — every one, every one of some
sizes, or a list — and reports, next to each verdict, the largest t for which *every*
coalition of size ≤ t was audited and found private. A size with a leak, an inconclusive or a
not-applicable verdict, or one not fully audited, ends the count: t is only claimed where
every coalition of that size said "private" with its power.

Coalitions range over every participant, including those in non-data roles (an aggregator, a
dealer, a noise generator), but never hold every data holder: t-privacy concerns coalitions
that leave at least one data holder honest. ``largest_private_t`` counts every participant
alike; a protocol's declared t (:class:`Threshold`) counts data holders, lets some roles join
uncounted (SecAgg's aggregator) and leaves others out (a trusted dealer), and the study
compares it with ``largest_private_t_as_declared``, counted the same way.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from parties.audit.result import PRIVATE, VERDICTS, AuditResult
from protocols.errors import InputError


def enumerate_coalitions(
    participants: Sequence[int], sites: Sequence[int], sizes: Sequence[int] | None = None
) -> list[tuple[int, ...]]:
    """Every coalition of ``participants`` of the given sizes that leaves a site honest.

    Parameters
    ----------
    participants : sequence of int
        Every party of the run (data holders and other roles).
    sites : sequence of int
        The data holders.
    sizes : sequence of int, optional
        Coalition sizes (default: 1 up to the number of participants − 1).

    Raises
    ------
    InputError
        For a size outside 1..(participants − 1).
    """
    ids = sorted(int(p) for p in participants)
    site_set = set(sites)
    largest = len(ids) - 1
    if sizes is None:
        sizes = range(1, largest + 1)
    bad = [t for t in sizes if not 1 <= t <= largest]
    if bad:
        raise InputError(f"sizes = {list(sizes)}: coalition sizes must lie in 1..{largest} "
                         f"(the run has {len(ids)} participants)")
    return [c for t in sorted(set(sizes)) for c in itertools.combinations(ids, t)
            if not site_set <= set(c)]


@dataclass(frozen=True)
class Threshold:
    """The t a protocol declares, and which participants it counts.

    A protocol is declared t-private in this sense: every coalition of at most ``t`` data
    holders, joined by any of the participants whose role is in ``free_roles`` (they may join
    without being counted: SecAgg's aggregator) and by none whose role is in
    ``excluded_roles`` (trusted by the paper, outside the declaration: NormedSecureSum's
    dealer, CAPE's noise generator), learns nothing beyond its inputs and outputs. A
    participant in any other non-data role counts as one of the ``t``.

    Attributes
    ----------
    t : int
        The declared number of colluding data holders.
    free_roles, excluded_roles : tuple of str
        Roles that join without counting, and roles outside the declaration.
    source : str
        The paper's statement it comes from.
    """

    t: int
    free_roles: tuple[str, ...] = ()
    excluded_roles: tuple[str, ...] = ()
    source: str = ""

    def describe(self) -> str:
        """One line: what t counts."""
        text = f"t = {self.t} data holders"
        if self.free_roles:
            text += f" with any {', '.join(self.free_roles)}"
        if self.excluded_roles:
            text += f", no {', '.join(self.excluded_roles)}"
        return text + (f" ({self.source})" if self.source else "")

    def coalitions(self, participants: Sequence[int], sites: Sequence[int],
                   roles: dict[int, str], size: int) -> list[tuple[int, ...]]:
        """Every coalition of ``size`` counted members in this declaration's sense."""
        site_set = set(sites)
        free = [p for p in participants if p not in site_set
                and roles.get(p) in self.free_roles]
        counted = [p for p in participants if p in site_set or (
            roles.get(p) not in self.free_roles and roles.get(p) not in self.excluded_roles)]
        out = []
        for core in itertools.combinations(sorted(counted), size):
            if site_set <= set(core):
                continue
            for k in range(len(free) + 1):
                out += [tuple(sorted((*core, *extra)))
                        for extra in itertools.combinations(free, k)]
        return out


@dataclass(frozen=True)
class CoalitionStudy:
    """The audits of many coalitions of one run.

    Attributes
    ----------
    method : str
        The audit method.
    results : tuple of AuditResult
        One per audited coalition, by size, then lexicographically.
    participants : tuple of int
        Every party of the run.
    sites : tuple of int
        The data holders.
    roles : dict of int to str
        Each participant's role.
    declared_threshold : int or None
        The t the protocol declares (SecureSum: M − 1), when it declares one.
    threshold : Threshold, optional
        The declaration in full: which participants its t counts
        (:attr:`largest_private_t_as_declared` counts the same ones). None: every
        participant counts (as :attr:`largest_private_t`).
    """

    method: str
    results: tuple[AuditResult, ...]
    participants: tuple[int, ...]
    sites: tuple[int, ...]
    roles: dict[int, str]
    declared_threshold: int | None = None
    threshold: Threshold | None = None

    @property
    def largest_private_t(self) -> int:
        """The largest t such that every coalition of size ≤ t was audited and is private."""
        verdicts = {r.coalition: r.verdict for r in self.results}
        t = 0
        for size in range(1, len(self.participants)):
            every = enumerate_coalitions(self.participants, self.sites, [size])
            if not every or any(verdicts.get(c) != PRIVATE for c in every):
                break
            t = size
        return t

    @property
    def largest_private_t_as_declared(self) -> int:
        """The largest t such that every coalition of ≤ t members *counted as the declaration
        counts them* (:class:`Threshold`) was audited and is private; without a
        :class:`Threshold`, :attr:`largest_private_t`."""
        if self.threshold is None:
            return self.largest_private_t
        verdicts = {r.coalition: r.verdict for r in self.results}
        t = 0
        for size in range(1, len(self.sites)):
            every = self.threshold.coalitions(self.participants, self.sites, self.roles, size)
            if not every or any(verdicts.get(c) != PRIVATE for c in every):
                break
            t = size
        return t

    def counts(self) -> dict[int, dict[str, int]]:
        """Verdict counts by coalition size."""
        out: dict[int, Counter[str]] = {}
        for r in self.results:
            out.setdefault(len(r.coalition), Counter())[r.verdict] += 1
        return {size: {v: c[v] for v in VERDICTS if c[v]} for size, c in sorted(out.items())}

    def table(self) -> list[dict[str, Any]]:
        """One row per coalition: members, their roles, size, verdict, where it failed."""
        rows = []
        for r in self.results:
            where = r.message or (None if r.call is None else f"call {r.call}")
            rows.append({"coalition": list(r.coalition), "size": len(r.coalition),
                         "roles": sorted({self.roles.get(m, "site") for m in r.coalition}),
                         "verdict": r.verdict, "where": where,
                         "reason": r.details.get("reason")})
        return rows

    def _meets(self, t: int, threshold: int | None) -> bool | None:
        """t ≥ threshold: True; a coalition of size ≤ threshold not private: False; else None
        (the study stops short of the threshold without a counterexample)."""
        if threshold is None:
            return None
        if t >= threshold:
            return True
        inside = None if self.threshold is None else {
            c for size in range(1, threshold + 1)
            for c in self.threshold.coalitions(self.participants, self.sites, self.roles, size)}
        if any(r.verdict != PRIVATE and (len(r.coalition) <= threshold if inside is None
                                         else r.coalition in inside) for r in self.results):
            return False
        return None

    def summary(self) -> dict[str, Any]:
        """The report's ``coalition_studies`` entry (README, report schema)."""
        t = self.largest_private_t
        threshold = self.declared_threshold
        as_declared = self.largest_private_t_as_declared
        return {
            "method": self.method,
            "coalitions": len(self.results),
            "sizes": sorted({len(r.coalition) for r in self.results}),
            "verdicts_by_size": {str(k): v for k, v in self.counts().items()},
            "largest_private_t": t,
            "declared_threshold": threshold,
            "declared_counts": None if self.threshold is None else self.threshold.describe(),
            "largest_private_t_as_declared": as_declared,
            "meets_declared_threshold": self._meets(as_declared, threshold),
            "table": self.table(),
        }
