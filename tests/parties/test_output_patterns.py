"""A message pattern that follows the declared output is not a leak; one that follows an
honest input is (issue 27, class 1, false alarm of output-following patterns).

The simulation method's alternatives that change the output (shift, double, ...) may change an
output-following pattern; the re-split alternatives keep the sum and judge it. The exact method
compares the patterns of enumerated inputs with A's output only (and of aborted runs). The
statistical method's alternatives keep the sum already. Attacks count party 0's pads.
"""

from __future__ import annotations

import planted_outputs as po
import pytest

from parties.audit import ConditionedRandomness
from parties.party import site_parties
from protocols.field import prime_field
from sim.privacy import SimPyRunner, audit

P61 = 2**61 - 1
F = prime_field(P61)
F5 = prime_field(5)
X = [F.elements([3, 4]), F.elements([5, 6]), F.elements([7, 8])]
X5 = [F5.elements([1]), F5.elements([2]), F5.elements([3])]
TRIALS = {"simulation": 60, "statistical": 60}


@pytest.mark.parametrize("name", po.HONEST)
@pytest.mark.parametrize("method", ["simulation", "statistical"])
def test_a_pattern_that_follows_the_output_stays_private(name: str, method: str) -> None:
    result = audit(po.HONEST[name], X, [0], prime=P61, method=method, trials=TRIALS[method])
    assert result.verdict == "private", result.details


@pytest.mark.slow  # every honest tape of the pads: about 50 s and 8 minutes on one core
@pytest.mark.parametrize("name", po.HONEST)
def test_exact_keeps_a_pattern_that_follows_the_output_private(name: str) -> None:
    result = audit(po.HONEST[name], X5, [0], prime=5, method="exact")
    assert result.verdict == "private", result.details


@pytest.mark.parametrize("name", po.LEAKS)
@pytest.mark.parametrize("method", ["simulation", "statistical"])
def test_a_pattern_that_follows_an_input_is_a_leak(name: str, method: str) -> None:
    result = audit(po.LEAKS[name], X, [0], prime=P61, method=method, trials=TRIALS[method])
    assert result.verdict == "leak", result.details
    assert result.details["property"] in ("count", "recv_any", "order")


@pytest.mark.parametrize("name", po.LEAKS)
def test_exact_catches_a_pattern_that_follows_an_input(name: str) -> None:
    result = audit(po.LEAKS[name], X5, [0], prime=5, method="exact")
    assert result.verdict == "leak", result.details


def test_attack_counts_the_pads_and_reads_the_input_mod_3() -> None:
    runner = SimPyRunner(P61, 0, 3)
    for firsts in ((3, 5, 7), (3, 6, 6), (3, 7, 5)):  # one sum, other inputs
        inputs = [F.elements([v, 1]) for v in firsts]
        views = runner(site_parties(po.pings_by_input, [{"x": x} for x in inputs]),
                       ConditionedRandomness([0, 1, 2], [0], 3, 0))
        assert [po.count_pings(views[0], h) for h in (1, 2)] == [firsts[1] % 3, firsts[2] % 3]


def test_attack_on_the_honest_program_reads_only_the_sum() -> None:
    runner = SimPyRunner(P61, 0, 3)
    counts = set()
    for firsts in ((3, 5, 7), (3, 6, 6), (3, 7, 5)):
        inputs = [F.elements([v, 1]) for v in firsts]
        views = runner(site_parties(po.pings_by_sum, [{"x": x} for x in inputs]),
                       ConditionedRandomness([0, 1, 2], [0], 3, 0))
        counts.add(tuple(po.count_pings(views[0], h) for h in (1, 2)))
    assert counts == {(15 % 3, 15 % 3)}
