"""Cost formulas fitted by dry runs (:mod:`sim.cost_fit`), against the thesis's closed forms.

SecureSum per party per call on a d-vector among M parties (thesis seed 001, Table 2.1):
explicit — 2 rounds, 2(M − 1) messages, 2(M − 1)d elements; prg — 1 round, M − 1 messages,
(M − 1)d elements. A quantity that is not affine in d, or calls that depend on d, are named.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from parties.party import site_parties
from protocols.effects import RecvEach, SendEach
from protocols.errors import InputError
from protocols.secure_sum import secure_sum
from sim.cost_fit import cost_table, cost_table_dm, fit_costs, fit_costs_dm
from sim.network import Network
from sim.simulation import Simulation


def runner(program, m: int):
    def run_at(d: int):
        return Simulation(Network.build(m), seed=d).run(
            site_parties(program, [{"x": np.arange(d, dtype=float) + p} for p in range(m)]))
    return run_at


@pytest.mark.parametrize(("variant", "m"), [("explicit", 3), ("explicit", 5), ("prg", 4)])
def test_secure_sum_fits_the_thesis_formulas(variant: str, m: int) -> None:
    (line,) = fit_costs(runner(lambda ctx, x: secure_sum(ctx, x, variant), m), (2, 5, 9))
    rounds, per = (2, 2) if variant == "explicit" else (1, 1)
    assert (line.protocol, line.call, line.party) == ("secure_sum", 1, None)  # 0: key agreement
    assert line.fitted["rounds"].a == rounds and line.fitted["rounds"].b == 0
    assert line.fitted["messages_sent"].a == per * (m - 1)
    assert (line.fitted["elements_sent"].a, line.fitted["elements_sent"].b) == (
        0, Fraction(per * (m - 1)))
    assert all(f.affine for f in line.fitted.values())
    assert line.fitted["elements_sent"].formula() == f"{per * (m - 1)}d"
    rows = cost_table([line], runner(lambda ctx, x: secure_sum(ctx, x, variant), m)(7), 7)
    assert [r[-2] == r[-1] for r in rows] == [True] * 3  # fitted at d = 7 == measured


def square(ctx, x):
    """Sends d² elements to every peer: not affine in d."""
    call = ctx.new_call("square")
    d = len(x)
    yield SendEach(dict.fromkeys(ctx.peers, np.zeros(d * d)), call, "v")
    yield RecvEach(ctx.peers, call, "v")
    return d


def many_calls(ctx, x):
    for _ in range(len(x)):
        call = ctx.new_call("step")
        yield SendEach(dict.fromkeys(ctx.peers, np.zeros(1)), call, "v")
        yield RecvEach(ctx.peers, call, "v")


def lopsided(ctx, x):
    call = ctx.new_call("lopsided")
    if ctx.party == 0:
        yield SendEach(dict.fromkeys(ctx.peers, np.zeros(len(x))), call, "v")
    else:
        yield RecvEach([0], call, "v")


def test_what_does_not_fit_is_named() -> None:
    (line,) = fit_costs(runner(square, 3))
    assert not line.fitted["elements_sent"].affine
    assert line.fitted["elements_sent"].formula() == "not affine in d (2, 8, 18)"  # 2·d²
    with pytest.raises(InputError, match="calls depend on d"):
        fit_costs(runner(many_calls, 2))
    with pytest.raises(InputError, match="three increasing"):
        fit_costs(runner(square, 2), (3, 2, 1))
    lines = fit_costs(runner(lopsided, 3))
    assert [(ln.party, ln.fitted["elements_sent"].formula()) for ln in lines] == [
        (0, "2d"), (1, "0"), (2, "0")]


# -- in d and M: SecureSum's closed form (protocols.secure_sum.call_cost and Table 2.1) ------


def runner_dm(program):
    def run_at(d: int, m: int):
        return Simulation(Network.build(m), seed=d + 10 * m).run(
            site_parties(program, [{"x": np.arange(d, dtype=float) + p} for p in range(m)]))
    return run_at


@pytest.mark.parametrize("variant", ["explicit", "prg"])
def test_secure_sum_fits_its_closed_form_in_d_and_m_on_sizes_it_never_ran(variant: str) -> None:
    from protocols.secure_sum import call_cost

    (line,) = fit_costs_dm(runner_dm(lambda ctx, x: secure_sum(ctx, x, variant)),
                           (2, 5), (2, 3), (9, 6))
    assert (line.protocol, line.call, line.party) == ("secure_sum", 1, None)
    assert all(f.bilinear for f in line.fitted.values())
    per, rounds = (2, 2) if variant == "explicit" else (1, 1)
    for d, m in [(1, 2), (7, 4), (3, 11), (40, 7)]:  # none of them a dry run's size
        thesis = {"rounds": rounds, "messages_sent": per * (m - 1),
                  "elements_sent": per * (m - 1) * d}  # Table 2.1, by hand
        declared = call_cost(m, length=d, variant=variant)
        for quantity, fitted in line.fitted.items():
            assert fitted.at(d, m) == thesis[quantity] == getattr(declared, quantity)
    scale = "" if per == 1 else str(per)
    assert line.fitted["elements_sent"].formula() == f"{scale}dM − {scale}d"
    assert line.fitted["messages_sent"].formula() == f"{scale}M − {per}"
    rows = cost_table_dm([line], runner_dm(lambda ctx, x: secure_sum(ctx, x, variant))(6, 4), 6)
    assert [r[-2] == r[-1] for r in rows] == [True] * 3  # fitted at (6, 4) == measured


def all_to_one(ctx, x):
    """Party 0 receives every vector and answers each sender with M − 1 copies of its own:
    party 0 sends (M − 1)² d elements — quadratic in M, so not bilinear."""
    call = ctx.new_call("all_to_one")
    d, m = len(x), ctx.n_parties
    if ctx.party == 0:
        yield RecvEach(ctx.peers, call, "v")
        yield SendEach(dict.fromkeys(ctx.peers, np.zeros((m - 1) * d)), call, "w")
    else:
        yield SendEach({0: np.zeros(d)}, call, "v")
        yield RecvEach([0], call, "w")


def test_what_is_not_bilinear_in_d_and_m_is_named_per_party() -> None:
    lines = fit_costs_dm(runner_dm(all_to_one), (1, 2), (3, 4), (3, 6))
    assert [ln.party for ln in lines] == [0, 1, 2]  # ids present at every size
    first = lines[0].fitted["elements_sent"]
    assert not first.bilinear and first.formula().startswith("not bilinear in d, M (")
    assert first.values[(3, 6)] == 25 * 3  # (M − 1)² d at the held-out size, by hand
    for ln in lines[1:]:
        assert ln.fitted["elements_sent"].formula() == "d"
        assert ln.fitted["messages_sent"].formula() == "1"
    with pytest.raises(InputError, match="depend on d or M"):
        fit_costs_dm(runner_dm(many_calls), (1, 2), (2, 3), (3, 4))
    with pytest.raises(InputError, match="off that grid"):
        fit_costs_dm(runner_dm(square), (1, 2), (2, 3), (2, 3))
