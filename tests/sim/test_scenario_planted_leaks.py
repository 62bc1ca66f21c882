"""Issue 27's leak classes planted in a user's program and caught through a scenario's
``[[audit]]`` (the ``program = "module:function"`` route of :mod:`sim.experiments.user_program`).

Each party sums column 0 of its rows with SecureSum; the planted variants add what a party
observes beyond payloads — an abort, an extra message, a longer message, a slower ``Compute``
— when an honest input crosses a bound that the run's own data does not reach. The pattern
check redraws the honest rows within the data's span, so the bound is crossed in some
alternatives: a ``leak`` naming the property. A second SecureSum round run when the
*declared sum* crosses a bound follows the output, not the inputs: it stays ``private``. (The
same classes with attacks that recover the input from the views are in
``tests/parties/test_pattern.py``; this file checks the scenario route.)
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from sim.runner import run_scenario

MODULE = '''
"""Column sums with planted metadata leaks (tests/sim/test_scenario_planted_leaks.py)."""
import numpy as np
from protocols.effects import Call, Compute, Recv, Send
from protocols.secure_sum import secure_sum

BOUND = 5.0
STATUS = Call("status", 0)  # a side call outside SecureSum


def honest(ctx, X):
    total = yield from secure_sum(ctx, np.asarray(X)[:, 0])
    return total


def aborts(ctx, X):
    if np.asarray(X)[0, 0] > BOUND:
        raise RuntimeError("value over the bound")
    return (yield from honest(ctx, X))


def extra_message(ctx, X):
    total = yield from honest(ctx, X)
    if ctx.party == 0 and np.asarray(X)[0, 0] > BOUND:
        yield Send(1, ctx.randomness.private(STATUS, 1), STATUS, "ping")
    return total


def longer_message(ctx, X):
    X = np.asarray(X)
    column = X[:, 0] if X[0, 0] <= BOUND else np.concatenate([X[:, 0], X[:1, 0]])
    total = yield from honest(ctx, X)
    if ctx.party == 0:
        yield Send(1, ctx.randomness.private(STATUS, len(column)), STATUS, "pad")
    if ctx.party == 1:
        yield Recv(0, STATUS, "pad")
    return total


def slow_compute(ctx, X):
    X = np.asarray(X)
    yield Compute(0.5 if X[0, 0] > BOUND else 0.1)
    return (yield from honest(ctx, X))


def output_ping(ctx, X):
    total = yield from honest(ctx, X)
    if float(np.sum(total)) > 40.0:  # a second round that follows the declared sum only
        yield from secure_sum(ctx, np.asarray(X)[:, 0] / 2)
    return total
'''


def write_case(tmp_path: Path, function: str, trials: int = 60) -> Path:
    """Three parties, four rows each; every first row's value is below the bound (2.0), the
    other rows span 0..10 (the span the alternatives redraw in)."""
    rows = np.array([[2.0, 9.0, 0.5, 7.0], [1.0, 3.0, 10.0, 0.0], [2.5, 6.0, 4.0, 8.0]])
    X = rows.reshape(-1, 1)
    np.savetxt(tmp_path / "data.csv", X, delimiter=",")
    (tmp_path / "planted").mkdir(exist_ok=True)
    (tmp_path / "planted" / "__init__.py").write_text("")
    (tmp_path / "planted" / "leaks.py").write_text(MODULE)
    path = tmp_path / f"{function}.toml"
    path.write_text(textwrap.dedent(f'''
        seed = 3
        [network]
        parties = 3
        [data]
        source = "file"
        path = "data.csv"
        partition = [4, 4, 4]
        [algorithm]
        program = "planted.leaks:{function}"
        [[audit]]
        method = "simulation"
        coalition = [1]
        trials = {trials}
    '''))
    return path


def audit_of(tmp_path: Path, function: str) -> dict:
    (result,) = run_scenario(write_case(tmp_path, function)).report["privacy"]
    return result


def test_the_honest_program_is_private(tmp_path) -> None:
    assert audit_of(tmp_path, "honest")["verdict"] == "private"


@pytest.mark.parametrize(("function", "prop"), [
    ("aborts", "abort"),
    ("extra_message", "count"),
    ("longer_message", "size"),
    ("slow_compute", "time"),
])
def test_a_metadata_leak_is_caught_through_a_scenario(tmp_path, function, prop) -> None:
    result = audit_of(tmp_path, function)
    assert result["verdict"] == "leak", result
    assert prop in str(result), result


def test_a_pattern_that_follows_the_output_stays_private(tmp_path) -> None:
    run = run_scenario(write_case(tmp_path, "output_ping"))
    # the run's sum (53) crosses the bound: the second round is taken, and the redrawn
    # alternatives (rows within 0..10) fall on both sides of it
    assert run.report["communication"]["per_protocol"]["secure_sum"]["calls"] == 2
    (result,) = run.report["privacy"]
    assert result["verdict"] == "private", result
    assert result["details"]["pattern_alternatives"] > 0
