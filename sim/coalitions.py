"""Coalition studies on the simulator: every coalition's verdict, a table and a heat map.

``[[audit]] coalitions = "all"`` (or ``sizes = [1, 2]``, or a list of coalitions) audits every
named coalition of a scenario's run with one method and reports a table, a heat map (PNG) and
the largest t for which every coalition of size ≤ t is private, against the threshold the
protocol declares (:class:`parties.audit.coalitions.CoalitionStudy`), counted as the
declaration counts (:data:`DECLARED_THRESHOLDS`). The linear method
decides all coalitions from one set of probes; the other methods audit them one by one.

:func:`coalition_study` is the same for a user's own ``program(ctx, x)`` on field vectors.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from parties.audit import AuditResult, Progress, linear_audits
from parties.audit import audit as audit_with
from parties.audit.arguments import check_audit_inputs
from parties.audit.coalitions import CoalitionStudy, Threshold, enumerate_coalitions
from parties.audit.functionality import functionality_audit, judged_inputs
from parties.party import SITE, Program
from protocols.errors import InputError
from protocols.registry import Target
from sim.fixed_point_checks import check_defined_outputs, check_representable
from sim.network import Network
from sim.privacy import (
    AuditTarget,
    SimPyRunner,
    audit_seed_of,
    field_builder,
    run_audit,
)
from sim.report import table
from sim.scenario import AuditSpec


def _secagg_threshold(n_sites: int, variant: str | None) -> Threshold | None:
    """Bonawitz et al. (CCS 2017), Thm 6.3: the server with fewer than t users learns only the
    survivors' sum; SecAgg+ on a Harary graph H(k, n) (Bell et al., CCS 2020, with the
    deterministic graph of :mod:`protocols.secagg`) also needs fewer than k colluding sites,
    the graph's vertex connectivity, so that the coalition cannot cut the honest survivors'
    masks apart (with no dropout)."""
    from protocols.secagg import config_of

    text = (variant or "").replace(" ", "")
    if not text or text in ("oracle=affine", "oracle=aes"):
        return None  # t is not named: the study cannot state the declaration
    config = config_of(text)
    t = config.threshold - 1
    source = "Bonawitz et al. CCS 2017, Thm 6.3: fewer than t users with the server"
    if config.graph == "harary":
        t = min(t, config.degree - 1)
        source += f"; Harary degree k = {config.degree}: fewer than k (vertex connectivity)"
    return Threshold(max(t, 0), free_roles=("aggregator",), source=source)


DECLARED_THRESHOLDS: dict[str, Callable[[int, str | None], Threshold | None]] = {
    "secure_sum": lambda n, _v: Threshold(
        n - 1, source="thesis seed 001, §2.2: any coalition of M − 1 parties"),
    "normed_secure_sum": lambda n, _v: Threshold(
        n - 1, excluded_roles=("dealer",),
        source="thesis seed 001, §2.2 and spec normed_secure_sum §2.4: M − 1 data holders, the "
               "dealer trusted (with any data holder it unmasks every opening; alone it "
               "receives nothing online)"),
    "secagg": _secagg_threshold,
    "cape": lambda n, _v: Threshold(
        max(math.ceil(n / 3) - 1, 0), free_roles=("aggregator",),
        excluded_roles=("noise_generator",),
        source="CAPE, arXiv:1904.10059 v3 and spec cape.md: S_C ≤ ⌈S/3⌉ − 1 sites with the "
               "aggregator, the noise generator trusted; the simulator's DP check "
               "(protocols.cape_simulator) may admit more, e.g. 2 of S = 5 at ε = 1"),
}
"""Protocol name → ``threshold(n_sites, variant)``, the t it declares and which participants
that t counts (:class:`parties.audit.coalitions.Threshold`): a study compares it with its
``largest_private_t_as_declared``, counted the same way.

A t counts data holders; SecAgg's and CAPE's aggregator may join the coalition uncounted (the
theorems cover "the server with fewer than t users"); NormedSecureSum's dealer and CAPE's
noise generator are trusted by the papers, so coalitions that hold them are outside the
declaration (the study still audits them and ``largest_private_t``, over every participant,
shows their verdicts)."""


def declared_threshold(protocol: Target, variant: str | None, n_sites: int
                       ) -> Threshold | None:
    """The threshold a target declares: a name, a Declaration or a sequence of them.

    A target of several protocols (PD-SVD: SecureSum and NormedSecureSum) declares the
    strictest combination: the least t, the roles every one lets join uncounted, and every
    role any one excludes. None when no named protocol declares a threshold.
    """
    items = protocol if isinstance(protocol, Sequence) and not isinstance(
        protocol, str | bytes) else (protocol,)
    found = []
    for item in items:
        name = item if isinstance(item, str) else getattr(item, "name", None)
        rule = DECLARED_THRESHOLDS.get(name) if isinstance(name, str) else None
        one = None if rule is None else rule(n_sites, variant)
        if one is not None:
            found.append(one)
    if not found:
        return None
    if len(found) == 1:
        return found[0]
    free = set(found[0].free_roles).intersection(*(f.free_roles for f in found[1:]))
    excluded = set().union(*(f.excluded_roles for f in found))
    return Threshold(min(f.t for f in found), tuple(sorted(free - excluded)),
                     tuple(sorted(excluded)), "; ".join(f.source for f in found))

VERDICT_COLOURS = {"private": "#3a9a4f", "leak": "#c8372d", "inconclusive": "#e0a526",
                   "not applicable": "#9a9a9a"}


def _coalitions(
    requested: Sequence[Sequence[int]] | str | None, sizes: Sequence[int] | None,
    participants: Sequence[int], sites: Sequence[int],
) -> list[tuple[int, ...]]:
    if requested is None or requested == "all":
        return enumerate_coalitions(participants, sites, sizes)
    if isinstance(requested, str):
        raise InputError(f"coalitions = {requested!r} must be 'all' or a list of coalitions")
    out = []
    for c in requested:
        if isinstance(c, str | bytes) or not isinstance(c, Sequence) or any(
                isinstance(m, bool) or not isinstance(m, int | np.integer) for m in c):
            raise InputError(f"coalition {c!r:.60} must be a list of party ids")
        members = tuple(sorted({int(m) for m in c}))
        if len(members) != len(c):
            raise InputError(f"coalition {list(c)} names a party twice; name each member once")
        unknown = sorted(set(members) - set(participants))
        if not members or unknown or set(sites) <= set(members):
            raise InputError(f"coalition {list(c)} must name 1 or more of the participants "
                             f"{list(participants)} and leave a data holder honest")
        out.append(members)
    return out


def run_study(
    spec: AuditSpec,
    target: AuditTarget,
    *,
    prime: int,
    frac_bits: int,
    seed: int,
    network: Network | None = None,
    progress: Progress | None = None,
    index: int = 0,
) -> CoalitionStudy:
    """Run one ``[[audit]]`` with ``coalitions`` or ``sizes`` against the algorithm's run."""
    roles = {p.id: p.role for p in target.parties}
    sites = tuple(sorted(p for p, r in roles.items() if r == SITE))
    # Only the simulation method replays non-data roles; the others run the field program.
    participants = tuple(sorted(roles)) if spec.method == "simulation" else sites
    chosen = _coalitions(spec.coalitions, spec.sizes, participants, sites)
    declared = declared_threshold(target.protocol, target.variant, len(sites))
    if spec.method == "linear" and target.field_program is not None:
        runner = SimPyRunner(prime, 0, seed, network)
        results = linear_audits(runner, field_builder(target.field_program),
                                [x.size for x in target.field_inputs or ()], chosen,
                                probes=spec.probes, seed=audit_seed_of(seed, index),
                                progress=progress)
        results = _judged_outputs(results, runner, field_builder(target.field_program),
                                  list(target.field_inputs or ()), chosen,
                                  audit_seed_of(seed, index), target.protocol)
    else:
        results = []
        for i, c in enumerate(chosen):
            one = dataclasses.replace(spec, coalition=c, coalitions=None, sizes=None)
            results.append(run_audit(one, target, prime=prime, frac_bits=frac_bits, seed=seed,
                                     network=network, index=index))
            if progress is not None:
                progress("coalitions", i + 1, len(chosen))
    return CoalitionStudy(spec.method, tuple(results), participants, sites, roles,
                          None if declared is None else declared.t, declared)


def _judged_outputs(results: Sequence[AuditResult], runner: SimPyRunner,
                    build: Callable[[Sequence[Any]], list[Any]], values: list[np.ndarray],
                    chosen: Sequence[tuple[int, ...]], seed: int,
                    protocol: Any) -> list[AuditResult]:
    """Each coalition's linear verdict, unless its outputs are beyond the functionality (on
    the field inputs, for the target's own calls)."""
    return [functionality_audit(runner, build(values), c, method=r.method, seed=seed,
                                protocol=protocol, inputs=judged_inputs(
                                    runner, build, values, c, seed=seed, protocol=protocol))
            or r for r, c in zip(results, chosen, strict=True)]


def coalition_study(
    program: Program,
    inputs: Sequence[Any],
    coalitions: Sequence[Sequence[int]] | str = "all",
    *,
    prime: int | str,
    method: str = "linear",
    sizes: Sequence[int] | None = None,
    protocol: Target = None,
    seed: int = 0,
    frac_bits: int | None = None,
    progress: Progress | None = None,
    **options: Any,
) -> CoalitionStudy:
    """Audit every coalition (or ``sizes``, or a list) of ``program(ctx, x)`` on ``inputs``.

    Parameters
    ----------
    program : callable
        ``program(ctx, x)`` run by data holders 0..M−1, party m on ``inputs[m]``.
    inputs : sequence
        One flat vector of field elements per party.
    coalitions : "all" or sequence of sequence of int
        The coalitions.
    prime : int or str
        The field.
    method : str
        Any audit method (``linear`` decides every coalition from one set of probes).
    sizes : sequence of int, optional
        With ``coalitions = "all"``: only these sizes.
    protocol : str, Declaration or sequence of them, optional
        The protocol under audit; a built-in name also gives the declared threshold to
        compare with (e.g. ``"secure_sum"``).
    seed : int
        Seed of the audits.
    frac_bits : int, optional
        Fixed-point fractional bits for programs on reals (default 24, as everywhere); real
        inputs are checked as :func:`sim.privacy.audit` checks them.
    **options
        Passed to :func:`sim.privacy.audit` (``trials``, ``alpha``, ``probes``, ...).

    Returns
    -------
    CoalitionStudy

    >>> from protocols.field import prime_field
    >>> from sim.privacy import secure_sum_program
    >>> F = prime_field(2**61 - 1)
    >>> study = coalition_study(secure_sum_program("prg"), [F.elements([v]) for v in (1, 2, 3)],
    ...                         prime="2^61-1", protocol="secure_sum")
    >>> study.largest_private_t, study.declared_threshold
    (2, 2)
    """
    if isinstance(inputs, str | bytes) or not isinstance(inputs, Sequence) or len(inputs) < 2:
        raise InputError("inputs must hold one input per party, for at least 2 parties")
    sites = tuple(range(len(inputs)))
    chosen = _coalitions(coalitions, sizes, sites, sites)
    declared = declared_threshold(protocol, options.get("variant"), len(sites))
    runner = SimPyRunner(prime, frac_bits, seed=seed)
    check_audit_inputs(inputs, runner.field, field_only=method != "simulation")
    check_representable(inputs, runner.frac_bits)
    check_defined_outputs(runner, program, inputs)
    if method == "linear":
        values = [np.asarray(x) for x in inputs]
        results = linear_audits(runner, field_builder(program), [x.size for x in values],
                                chosen, probes=int(options.get("probes", 3)), seed=seed,
                                progress=progress)
        results = _judged_outputs(results, runner, field_builder(program), values, chosen,
                                  seed, protocol)
    else:
        results = [audit_with(program, inputs, c, runner=runner, method=method, seed=seed,
                              protocol=protocol, **options) for c in chosen]
    return CoalitionStudy(method, tuple(results), sites, sites, dict.fromkeys(sites, SITE),
                          None if declared is None else declared.t, declared)


def private_t_text(study: CoalitionStudy) -> str:
    """"largest private t = …", or why a study that skipped small sizes cannot say.

    t counts every coalition of size ≤ t, so a study without size 1 (``sizes = [2]``)
    determines no t: it says which sizes it audited and how many of them were private,
    rather than "t = 0" over coalitions it never audited.
    """
    studied = sorted({len(r.coalition) for r in study.results})
    t = study.largest_private_t
    if t > 0 or not studied or studied[0] == 1:
        return f"largest private t = {t}"
    missing = ", ".join(str(s) for s in range(1, studied[0]))
    private = sum(r.verdict == "private" for r in study.results)
    return (f"largest private t not determined (size {missing} not audited; "
            f"{private} of {len(study.results)} coalitions of size "
            f"{', '.join(map(str, studied))} private)")


def declared_text(study: CoalitionStudy) -> str:
    """The declared t, what it counts, and the study's t counted the same way."""
    if study.declared_threshold is None:
        return "none"
    if study.threshold is None or (not study.threshold.free_roles
                                   and not study.threshold.excluded_roles):
        return str(study.declared_threshold)
    return (f"{study.threshold.describe()}; largest private t counted so = "
            f"{study.largest_private_t_as_declared}")


def study_table(index: int, study: CoalitionStudy) -> str:
    """The console summary of a study: verdict counts by coalition size, and t."""
    counts = study.counts()
    rows = [[size, sum(c.values()), *(c.get(v, 0) for v in VERDICT_COLOURS)]
            for size, c in counts.items()]
    title = (f"coalition study [[audit]] {index} ({study.method}): {private_t_text(study)}, "
             f"declared {declared_text(study)}")
    return table(["size", "coalitions", *VERDICT_COLOURS], rows, title)


def heat_map(study: CoalitionStudy, title: str = "") -> Any:
    """The verdict of every coalition: one row per size, one cell per coalition.

    Cells are coloured by verdict (private, leak, inconclusive, not applicable) and labelled
    with their members when there is room; the title gives the largest private t and the
    declared threshold.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    by_size: dict[int, list] = {}
    for r in study.results:
        by_size.setdefault(len(r.coalition), []).append(r)
    sizes = sorted(by_size)
    width = max(len(v) for v in by_size.values())
    verdicts = list(VERDICT_COLOURS)
    grid = np.full((len(sizes), width), np.nan)
    for i, size in enumerate(sizes):
        for j, r in enumerate(by_size[size]):
            grid[i, j] = verdicts.index(r.verdict)
    fig, ax = plt.subplots(figsize=(min(16.0, 2.0 + 0.28 * width), 1.2 + 0.55 * len(sizes)))
    cmap = ListedColormap(list(VERDICT_COLOURS.values())).with_extremes(bad="white")
    ax.pcolormesh(np.ma.masked_invalid(grid), cmap=cmap, vmin=-0.5, vmax=len(verdicts) - 0.5,
                  edgecolors="white", linewidth=0.6)
    ax.invert_yaxis()
    if width <= 24:
        glue = "" if len(study.participants) <= 10 else ","
        for i, size in enumerate(sizes):
            for j, r in enumerate(by_size[size]):
                ax.text(j + 0.5, i + 0.5, glue.join(str(m) for m in r.coalition),
                        ha="center", va="center", fontsize=6, color="white")
    ax.set_yticks(np.arange(len(sizes)) + 0.5, [f"t = {s}" for s in sizes])
    ax.xaxis.get_major_locator().set_params(integer=True)
    if width <= 24:
        ax.set_xticks([])
    ax.set_xlabel("coalition (lexicographic within its size)")
    threshold = ("none declared" if study.declared_threshold is None
                 else str(study.declared_threshold) if study.threshold is None
                 else f"t = {study.threshold.t} (as declared: "
                      f"{study.largest_private_t_as_declared})")
    ax.set_title(f"{title + ': ' if title else ''}{study.method} audit of "
                 f"{len(study.results)} coalitions — {private_t_text(study)}, declared "
                 f"{threshold}", fontsize=9)
    present = sorted({r.verdict for r in study.results}, key=verdicts.index)
    ax.legend(handles=[Patch(color=VERDICT_COLOURS[v], label=v) for v in present],
              loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7)
    return fig
