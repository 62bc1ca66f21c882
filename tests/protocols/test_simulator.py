"""SecureSum's simulator draws the coalition's view with its real law (thesis seed 001, §2.2).

Independent evidence: in GF(5) with d = 1 the real law of a coalition's received messages,
given its inputs and its own randomness, is computed exactly by running the protocol on every
honest random tape; the simulator, given only the coalition's side of one of those runs, must
put its draws on exactly that support, with the same frequencies (a chi-square fit over 20 000
draws). Plus the simulator interface's accessors and :func:`uniform_with_sum`.
"""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
from scipy import stats

from parties.audit.calls import split_run
from parties.audit.randomness import tape_factory
from parties.party import site_parties
from protocols.effects import Call
from protocols.field import prime_field
from protocols.secure_sum import VARIANTS, SecureSumSimulator, secure_sum_field
from protocols.simulator import CallView, SimulatorMismatch, stream_owners, uniform_with_sum
from sim.privacy import SimPyRunner

F5 = prime_field(5)
F61 = prime_field(2**61 - 1)


def _program(variant: str):
    return lambda ctx, x: secure_sum_field(ctx, x, variant)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("coalition", [(0,), (1,), (0, 2)])
def test_the_simulated_law_is_the_real_law(variant: str, coalition: tuple[int, ...]) -> None:
    runner = SimPyRunner(5)
    parties = site_parties(_program(variant), [{"x": F5.elements([v])} for v in (1, 4, 2)])
    found: dict = {}
    runner(parties, tape_factory(None, found))
    keys = sorted(found, key=repr)
    mine = [k for k in keys if stream_owners(k) & set(coalition)]
    theirs = [k for k in keys if not stream_owners(k) & set(coalition)]
    rng = np.random.default_rng(sum(coalition))
    fixed = {k: F5.random(rng, found[k]) for k in mine}
    real: Counter = Counter()
    view = None
    n_theirs = sum(found[k] for k in theirs)
    for values in itertools.product(range(5), repeat=n_theirs):
        tape, offset = dict(fixed), 0
        for k in theirs:
            tape[k] = F5.elements(np.array(values[offset: offset + found[k]]))
            offset += found[k]
        views = runner(parties, tape_factory(tape))
        (record,) = split_run(views, coalition, F5, (0, 1, 2)).values()
        order = sorted(record.received)
        real[tuple(int(record.received[k][0]) for k in order)] += 1
        view = record.view if view is None else view
    drawn = SecureSumSimulator(variant).simulate(view, np.random.default_rng(7), 20_000)
    assert sorted((r, s, step, 0) for r, s, step in drawn) == order
    samples = np.stack([np.ravel(drawn[key[:3]]) for key in order], axis=1)
    simulated = Counter(tuple(int(v) for v in row) for row in samples)
    assert set(simulated) <= set(real)  # nothing the real protocol could not show
    support = sorted(real)
    expected = np.array([real[s] for s in support], dtype=float)
    observed = np.array([simulated[s] for s in support], dtype=float)
    if len(support) == 1:  # one honest party: the view is determined
        assert observed[0] == 20_000
    else:
        fit = stats.chisquare(observed, expected * 20_000 / expected.sum())
        assert fit.pvalue > 1e-4


def _view(**kw) -> CallView:
    base = dict(call=Call("secure_sum", 2), field=F5, parties=(0, 1, 2), members=(0,))
    return CallView(**{**base, **kw})


def test_call_view_accessors_name_what_is_missing() -> None:
    view = _view(inputs={0: (("x", F5.elements([1])),)},
                 outputs={0: (("sum", F5.elements([3])),)})
    assert view.honest == (1, 2)
    assert int(view.input(0)[0]) == 1 and int(view.output("sum")[0]) == 3
    with pytest.raises(SimulatorMismatch, match=r"no mask stream .* secure_sum#2"):
        view.pair_stream(0, 1)
    with pytest.raises(SimulatorMismatch, match="sent no 'share' to party 1"):
        view.sent_by(0, 1, "share")
    with pytest.raises(SimulatorMismatch, match="recorded 0 inputs"):
        _view().input(0)
    disagree = _view(members=(0, 1), outputs={0: (("sum", F5.elements([3])),),
                                              1: (("sum", F5.elements([4])),)})
    with pytest.raises(SimulatorMismatch, match="different outputs"):
        disagree.output("sum")
    with pytest.raises(SimulatorMismatch, match="nothing to simulate"):
        SecureSumSimulator("prg").simulate(_view(members=(0, 1, 2)), np.random.default_rng(),
                                           1)
    assert SecureSumSimulator().determined(_view(members=(0, 1)))
    assert not SecureSumSimulator().determined(view)


def test_uniform_with_sum_keeps_the_total_and_is_uniform() -> None:
    rng = np.random.default_rng(3)
    offsets = F61.elements([[5, 6], [7, 8], [9, 10]])
    total = F61.elements([100, 200])
    out = uniform_with_sum(F61, rng, 4000, offsets, total)
    assert out.shape == (4000, 3, 2)
    sums = [[sum(int(out[n, k, j]) for k in range(3)) % F61.p for j in range(2)]
            for n in range(4000)]
    assert all(s == [100, 200] for s in sums)
    for k in range(3):  # every vector alone is uniform (the last one too)
        assert stats.kstest(out[:, k, 0].astype(float) / F61.p, "uniform").pvalue > 1e-4
    single = uniform_with_sum(F61, rng, 2, offsets[:1], total)
    assert [int(v) for v in single[1, 0]] == [100, 200]
