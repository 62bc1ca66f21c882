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

The formulas are per party per call for the number of parties of the dry runs (M is fixed);
:func:`cost_table` prints them beside the measured ledger of the real run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

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
            if real is None:
                got = "—"
            elif quantity == "rounds":
                got = str(real.rounds)
            else:
                values = getattr(real, quantity)
                got = str(values[line.party] if line.party is not None
                          else max(values.values()))
            rows.append([f"{line.protocol}#{line.call}",
                         "every" if line.party is None else str(line.party), quantity,
                         fitted.formula(), str(fitted.at(d)) if fitted.affine else "—", got])
    return rows
