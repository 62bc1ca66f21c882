"""A protocol's cost formula without writing one: dry runs at a few sizes, fitted and checked.

A built-in protocol states its cost as formulas of its parameters (DESIGN.md: "each protocol
module states its rounds, messages and field elements per party"). A user's program may not;
:func:`fit_costs` finds the formula of each of its calls by running it at three sizes
d₀ < d₁ < d₂ (a size is whatever the caller's ``run_at(d)`` varies — a vector length, the
number of columns of each party's rows) and reading the ledger:

* per call (protocol and call number) and per data holder: messages sent, elements sent, and
  the ledger rounds the call spans;
* each quantity q is fitted as q(d) = a + b·d through d₀ and d₁ (exact integers), and
  *checked* at d₂: a quantity that is not affine in d says so (``affine = False``) instead of
  extrapolating.

The formulas of :func:`fit_costs` are per party per call for the number of parties of the dry
runs (M is fixed). :func:`fit_costs_dm` varies M too: each quantity as
q(d, M) = a + b·d + c·M + e·d·M, solved on a 2 × 2 grid of (d, M) and checked at a held-out
size outside it. :func:`cost_table` and :func:`cost_table_dm` print them beside the measured
ledger of the real run.

What the fit assumes: the program's calls (their protocols and number) do not depend on d or
M, and each quantity is bilinear in (d, M) — true of share-and-add protocols (messages to the
M − 1 peers, d elements each); a ring or tree over the parties (log M rounds) or d² elements
fails the held-out check and is reported as not bilinear, with the measured values.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from protocols.errors import InputError
from sim.contract import measured_costs
from sim.simulation import Result

QUANTITIES = ("rounds", "messages_sent", "elements_sent")


@dataclass(frozen=True)
class Fitted:
    """q(d) = a + b·d, fitted through two sizes and checked at a third.

    Attributes
    ----------
    a, b : Fraction
        Intercept and slope.
    affine : bool
        Whether the third size agreed (False: the values are in ``values``).
    values : tuple of int
        The measured values at the three sizes.
    """

    a: Fraction
    b: Fraction
    affine: bool
    values: tuple[int, ...]

    def at(self, d: int) -> Fraction:
        return self.a + self.b * d

    def formula(self) -> str:
        """``"4"``, ``"2d"``, ``"2 + 2d"``; or the values when not affine in d."""
        if not self.affine:
            return "not affine in d (" + ", ".join(map(str, self.values)) + ")"
        a, b = self.a, self.b
        if b == 0:
            return str(a)
        slope = "d" if b == 1 else f"{b}d"
        if a == 0:
            return slope
        return f"{slope} + {a}" if a > 0 else f"{slope} − {-a}"


@dataclass(frozen=True)
class CostLine:
    """The fitted cost of one call of the program, per data holder.

    Attributes
    ----------
    protocol : str
    call : int
    party : int or None
        The data holder, or None when every data holder's cost is the same.
    fitted : dict of str to Fitted
        ``rounds``, ``messages_sent``, ``elements_sent``.
    """

    protocol: str
    call: int
    party: int | None
    fitted: dict[str, Fitted]


def _fit(sizes: Sequence[int], values: Sequence[int]) -> Fitted:
    (d0, d1, d2), (y0, y1, y2) = sizes, values
    b = Fraction(y1 - y0, d1 - d0)
    a = y0 - b * d0
    return Fitted(a, b, a + b * d2 == y2, tuple(values))


def fit_costs(run_at: Callable[[int], Result], sizes: Sequence[int] = (1, 2, 3)) -> list[CostLine]:
    """Fit each call's cost per data holder as a + b·d from dry runs at three sizes.

    Parameters
    ----------
    run_at : callable
        ``run_at(d) -> Result``: a completed run of the program at size ``d``.
    sizes : three ints
        Distinct sizes d₀ < d₁ < d₂.

    Returns
    -------
    list of CostLine
        In call order (key agreement, the setup, excluded).

    Raises
    ------
    InputError
        For bad sizes, or when the runs make different calls (the program's calls depend on d).
    """
    sizes = tuple(sizes)
    if len(sizes) != 3 or any(isinstance(d, bool) or not isinstance(d, int) or d < 1
                              for d in sizes) or not sizes[0] < sizes[1] < sizes[2]:
        raise InputError(f"sizes = {sizes!r} must be three increasing integers ≥ 1")
    runs = [run_at(d) for d in sizes]
    per_run = []
    for result in runs:
        protocols = sorted({r.protocol for r in result.ledger} - {"key_agreement"})
        calls = {}
        for protocol in protocols:
            for measured in measured_costs(result, protocol):
                calls[(protocol, measured.call)] = measured
        per_run.append(calls)
    keys = [sorted(c) for c in per_run]
    if keys[0] != keys[1] or keys[0] != keys[2]:
        raise InputError(f"the program makes different calls at sizes {sizes} "
                         f"({', '.join(str(len(k)) for k in keys)} calls): its calls depend on "
                         "d, so no per-call formula fits")
    lines = []
    for protocol, call in sorted(keys[0], key=lambda k: (k[1], k[0])):
        at = [c[(protocol, call)] for c in per_run]
        parties = sorted(at[0].messages_sent)
        per_party = {}
        for party in parties:
            per_party[party] = {
                "rounds": _fit(sizes, [m.rounds for m in at]),
                "messages_sent": _fit(sizes, [m.messages_sent[party] for m in at]),
                "elements_sent": _fit(sizes, [m.elements_sent[party] for m in at]),
            }
        first = per_party[parties[0]]
        if all(per_party[p] == first for p in parties):
            lines.append(CostLine(protocol, call, None, first))
        else:
            lines.extend(CostLine(protocol, call, p, per_party[p]) for p in parties)
    return lines



def _measured_cell(real: Any, quantity: str, party: int | None) -> str:
    """A cost table's measured cell: the call's rounds, or the party's (every party's largest)
    messages or elements in the real run's ledger; "—" where the run made no such call."""
    if real is None:
        return "—"
    if quantity == "rounds":
        return str(real.rounds)
    values = getattr(real, quantity)
    return str(values[party] if party is not None else max(values.values()))

def cost_table(lines: Sequence[CostLine], result: Result, d: int) -> list[list[str]]:
    """Rows ``[call, party, quantity, formula, at d, measured]`` beside the real run's ledger."""
    measured = {}
    for protocol in sorted({line.protocol for line in lines}):
        for m in measured_costs(result, protocol):
            measured[(protocol, m.call)] = m
    rows = []
    for line in lines:
        real = measured.get((line.protocol, line.call))
        for quantity in QUANTITIES:
            fitted = line.fitted[quantity]
            got = _measured_cell(real, quantity, line.party)
            rows.append([f"{line.protocol}#{line.call}",
                         "every" if line.party is None else str(line.party), quantity,
                         fitted.formula(), str(fitted.at(d)) if fitted.affine else "—", got])
    return rows


# -- in d and M --------------------------------------------------------------------------------


@dataclass(frozen=True)
class FittedDM:
    """q(d, M) = a + b·d + c·M + e·d·M, solved from a 2 × 2 grid of sizes, checked held out.

    The bilinear form covers what share-and-add protocols cost per party: a message to each
    of the M − 1 peers (c·M + a) carrying d elements each (e·d·M + b·d). The four grid runs
    determine it exactly; a fifth run at a size outside the grid (d and M both larger) checks
    it, and a quantity that disagrees there says so (``bilinear = False``) instead of
    extrapolating.

    Attributes
    ----------
    a, b, c, e : Fraction
        Constant, d, M and d·M coefficients.
    bilinear : bool
        Whether the held-out size agreed.
    values : dict of (int, int) to int
        The measured values at each (d, M) size, the held-out one last.
    """

    a: Fraction
    b: Fraction
    c: Fraction
    e: Fraction
    bilinear: bool
    values: dict[tuple[int, int], int]

    def at(self, d: int, m: int) -> Fraction:
        return self.a + self.b * d + self.c * m + self.e * d * m

    def formula(self) -> str:
        """``"M − 1"``, ``"dM − d"``, ``"2"``; or the values when not bilinear."""
        if not self.bilinear:
            shown = ", ".join(f"{v} at d = {d}, M = {m}" for (d, m), v in self.values.items())
            return f"not bilinear in d, M ({shown})"
        text = ""
        for coef, name in ((self.e, "dM"), (self.b, "d"), (self.c, "M"), (self.a, "")):
            if coef == 0:
                continue
            size = abs(coef)
            term = name if size == 1 and name else f"{size}{name}"
            if not text:
                text = term if coef > 0 else f"−{term}"
            else:
                text += f" + {term}" if coef > 0 else f" − {term}"
        return text or "0"


@dataclass(frozen=True)
class CostLineDM:
    """The fitted cost of one call of the program, per data holder, in d and M.

    Attributes
    ----------
    protocol : str
    call : int
    party : int or None
        The data holder (one present at every size), or None when every data holder's cost
        is the same.
    fitted : dict of str to FittedDM
        ``rounds``, ``messages_sent``, ``elements_sent``.
    """

    protocol: str
    call: int
    party: int | None
    fitted: dict[str, FittedDM]


def _fit_dm(ds: Sequence[int], ms: Sequence[int], held: tuple[int, int],
            values: dict[tuple[int, int], int]) -> FittedDM:
    (d0, d1), (m0, m1) = ds, ms
    y00, y10, y01, y11 = (values[(d0, m0)], values[(d1, m0)], values[(d0, m1)],
                          values[(d1, m1)])
    e = Fraction(y11 - y10 - y01 + y00, (d1 - d0) * (m1 - m0))
    b = Fraction(y10 - y00, d1 - d0) - e * m0  # ∂q/∂d = b + e·M
    c = Fraction(y01 - y00, m1 - m0) - e * d0  # ∂q/∂M = c + e·d
    a = y00 - b * d0 - c * m0 - e * d0 * m0
    fitted = FittedDM(a, b, c, e, True, dict(values))
    return FittedDM(a, b, c, e, fitted.at(*held) == values[held], dict(values))


def _calls(result: Result) -> dict[tuple[str, int], Any]:
    calls = {}
    for protocol in sorted({r.protocol for r in result.ledger} - {"key_agreement"}):
        for measured in measured_costs(result, protocol):
            calls[(protocol, measured.call)] = measured
    return calls


def fit_costs_dm(
    run_at: Callable[[int, int], Result],
    d_sizes: Sequence[int],
    m_sizes: Sequence[int],
    held_out: tuple[int, int],
) -> list[CostLineDM]:
    """Fit each call's cost per data holder as a + b·d + c·M + e·d·M from dry runs.

    Parameters
    ----------
    run_at : callable
        ``run_at(d, M) -> Result``: a completed run of the program at size d among M data
        holders.
    d_sizes, m_sizes : two ints each
        The grid: d₀ < d₁ (d ≥ 1) and M₀ < M₁ (M ≥ 2); four runs.
    held_out : (int, int)
        (d₂, M₂), a fifth size outside the grid, where the fit is checked.

    Returns
    -------
    list of CostLineDM
        In call order (key agreement, the setup, excluded). A data holder's own line is given
        for the ids 0..M₀ − 1 present at every size when their costs differ.

    Raises
    ------
    InputError
        For bad sizes, or when the runs make different calls (the calls depend on d or M).
    """
    ds, ms, held = tuple(d_sizes), tuple(m_sizes), tuple(held_out)
    ints = (*ds, *ms, *held)
    if (len(ds) != 2 or len(ms) != 2 or len(held) != 2
            or any(isinstance(v, bool) or not isinstance(v, int) for v in ints)
            or not 1 <= ds[0] < ds[1] or not 2 <= ms[0] < ms[1] or held[1] < 2 or held[0] < 1
            or held in {(d, m) for d in ds for m in ms}):
        raise InputError(f"d_sizes = {ds!r}, m_sizes = {ms!r}, held_out = {held!r} must be "
                         "two increasing d ≥ 1, two increasing M ≥ 2 and a (d, M) off that grid")
    sizes = [(d, m) for m in ms for d in ds] + [held]
    per_run = {size: _calls(run_at(*size)) for size in sizes}
    keys = {size: sorted(calls) for size, calls in per_run.items()}
    first = keys[sizes[0]]
    if any(k != first for k in keys.values()):
        counts = ", ".join(f"{len(k)} at d = {d}, M = {m}" for (d, m), k in keys.items())
        raise InputError(f"the program makes different calls at different sizes ({counts}): "
                         "its calls depend on d or M, so no per-call formula fits")
    lines: list[CostLineDM] = []
    common = range(min(ms[0], held[1]))
    for protocol, call in sorted(first, key=lambda k: (k[1], k[0])):
        at = {size: per_run[size][(protocol, call)] for size in sizes}
        per_party = {}
        for party in common:
            per_party[party] = {
                "rounds": _fit_dm(ds, ms, held, {s: m.rounds for s, m in at.items()}),
                "messages_sent": _fit_dm(ds, ms, held,
                                         {s: m.messages_sent[party] for s, m in at.items()}),
                "elements_sent": _fit_dm(ds, ms, held,
                                         {s: m.elements_sent[party] for s, m in at.items()}),
            }
        one = per_party[0]
        if all(per_party[p] == one for p in common):
            lines.append(CostLineDM(protocol, call, None, one))
        else:
            lines.extend(CostLineDM(protocol, call, p, per_party[p]) for p in common)
    return lines


def cost_table_dm(lines: Sequence[CostLineDM], result: Result, d: int) -> list[list[str]]:
    """Rows ``[call, party, quantity, formula, at (d, M), measured]`` beside the real run's
    ledger (M: the run's data holders)."""
    m = len(result.sites)
    measured = _calls(result)
    rows = []
    for line in lines:
        real = measured.get((line.protocol, line.call))
        for quantity in QUANTITIES:
            fitted = line.fitted[quantity]
            got = _measured_cell(real, quantity, line.party)
            rows.append([f"{line.protocol}#{line.call}",
                         "every" if line.party is None else str(line.party), quantity,
                         fitted.formula(), str(fitted.at(d, m)) if fitted.bilinear else "—",
                         got])
    return rows
