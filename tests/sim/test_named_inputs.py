"""A scenario's user program with named inputs: ``[algorithm.inputs]`` (issue 30, item 3).

Party m is called ``function(ctx, w=w[m], v=v[m])``; the audits replay it with the same names.
An honest weighted average stays ``private``; a planted bug that also sends the party's
unmasked pair to its neighbour is a ``leak``, and a small attack recovers the honest party's
value from the coalition's view. Expected values are numpy's on the scenario's own numbers.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from protocols.errors import ScenarioError
from sim.runner import run_scenario

MODULE = '''
"""A weighted average of one value v per party, weighted by w: (Σ w·v) / (Σ w)."""
import numpy as np
from protocols import secure_sum
from protocols.context import add_one_stream_mask
from protocols.effects import Input, Output, RecvEach, Send, Recv, SendEach
from protocols.registry import declare_protocol

DECLARATION = declare_protocol("named_wsum", functionality=secure_sum.functionality,
                               simulator=secure_sum.SecureSumSimulator,
                               honest_inputs=secure_sum.honest_inputs)


def average(ctx, w, v, bug=False):
    pair = ctx.fixed.encode(np.array([w * v, w]), n_summands=ctx.n_parties)
    call = ctx.new_call("named_wsum")
    yield Input("x", pair, call)
    if bug:  # planted: the unmasked pair also goes to the next party
        yield Send((ctx.party + 1) % ctx.n_parties, pair, call, "debug")
        yield Recv((ctx.party - 1) % ctx.n_parties, call, "debug")
    masked = add_one_stream_mask(ctx.randomness, ctx.party, ctx.peers, call, pair, ctx.field)
    yield SendEach(dict.fromkeys(ctx.peers, masked), call, "column_sum")
    got = yield RecvEach(ctx.peers, call, "column_sum")
    total = ctx.field.sum_arrays([masked, *got.values()])
    yield Output("sum", total, call)
    s = ctx.fixed.decode(total)
    return s[0] / s[1]


def buggy(ctx, w, v):
    return (yield from average(ctx, w, v, bug=True))
'''

W, V = [0.5, 1.0, 0.25], [2.0, 4.0, 9.0]


def write_case(tmp_path: Path, function: str = "average", inputs: str | None = None,
               data: bool = True) -> Path:
    (tmp_path / "named").mkdir(exist_ok=True)
    (tmp_path / "named" / "__init__.py").write_text("")
    (tmp_path / "named" / "protocol.py").write_text(MODULE)
    table = inputs if inputs is not None else f"w = {W}\nv = {V}"
    path = tmp_path / f"{function}.toml"
    text = textwrap.dedent('''
        seed = 6
        [network]
        parties = 3
        [data]
        rows = 3
        cols = 1
        [algorithm]
        program = "named.protocol:{function}"
        protocol = "named.protocol:DECLARATION"
        [algorithm.inputs]
        {table}
        [[audit]]
        method = "simulation"
        coalition = [1]
        trials = 120
    ''').format(function=function, table=table.replace("\n", "\n        "))
    if not data:
        text = text.replace("[data]\nrows = 3\ncols = 1\n", "")
    if inputs == "":
        text = text.replace("[algorithm.inputs]\n", "")
    path.write_text(text)
    return path


def test_named_inputs_reach_each_party_and_the_honest_average_is_private(tmp_path) -> None:
    run = run_scenario(write_case(tmp_path))
    w, v = np.array(W), np.array(V)
    expected = w @ v / w.sum()  # (0.5·2 + 1·4 + 0.25·9) / 1.75
    assert [float(run.outputs[f"party_{m}"]) for m in range(3)] == pytest.approx(
        [expected] * 3, abs=1e-6)
    assert [a["verdict"] for a in run.report["privacy"]] == ["private"]


def test_the_planted_bug_is_a_leak_and_its_message_gives_party_0_away(tmp_path) -> None:
    run = run_scenario(write_case(tmp_path, "buggy"))
    assert [a["verdict"] for a in run.report["privacy"]] == ["leak"]
    assert "debug" in run.report["privacy"][0]["message"]
    # the attack: coalition {1} decodes party 0's "debug" message into (w0·v0, w0), so v0
    view = run.run.result.coalition([1])  # type: ignore[union-attr]
    [debug] = [msg for sender, msg in view.received() if msg.step == "debug" and msg.sender == 0]
    p, scale = 2**61 - 1, 2.0**24  # the scenario's defaults: GF(2^61 − 1), 24 fraction bits
    signed = [int(e) - p if int(e) > p // 2 else int(e) for e in np.ravel(debug.payload)]
    wv0, w0 = (s / scale for s in signed)
    assert (w0, wv0 / w0) == pytest.approx((W[0], V[0]), abs=1e-6)


@pytest.mark.parametrize(("table", "pattern"), [
    ("w = [0.5, 1.0]\nv = [2.0, 4.0]", r"algorithm\.inputs\.w has 2 values but the network "
                                       r"has 3 parties"),
    ('w = [0.5, "a", 1.0]\nv = [1, 2, 3]', r"algorithm\.inputs\.w\[1\] = 'a' \(party 1\)"),
    ("w = 0.5\nv = [1, 2, 3]", r"algorithm\.inputs\.w = 0\.5 must be a list"),
    ("w = [0.5, nan, 1.0]\nv = [1, 2, 3]", r"algorithm\.inputs\.w\[1\] = nan \(party 1\) is not "
                                           r"finite"),
])
def test_bad_named_inputs_are_scenario_errors_naming_the_value(tmp_path, table, pattern) -> None:
    with pytest.raises(ScenarioError, match=pattern):
        run_scenario(write_case(tmp_path, inputs=table))


def test_a_program_on_named_inputs_needs_no_data_table(tmp_path) -> None:
    path = write_case(tmp_path, data=False)
    assert "[data]" not in path.read_text()
    run = run_scenario(path)
    w, v = np.array(W), np.array(V)
    assert [float(run.outputs[f"party_{m}"]) for m in range(3)] == pytest.approx(
        [w @ v / w.sum()] * 3, abs=1e-6)
    assert [a["verdict"] for a in run.report["privacy"]] == ["private"]


def test_the_planted_bug_is_still_a_leak_without_a_data_table(tmp_path) -> None:
    run = run_scenario(write_case(tmp_path, "buggy", data=False))
    assert [a["verdict"] for a in run.report["privacy"]] == ["leak"]


def test_without_data_or_named_inputs_the_scenario_error_names_both(tmp_path) -> None:
    path = write_case(tmp_path, inputs="", data=False)
    assert "[data]" not in path.read_text() and "inputs" not in path.read_text()
    with pytest.raises(ScenarioError, match=r"no \[data\] table.*\[algorithm\.inputs\]"):
        run_scenario(path)


def test_the_cli_runs_a_named_input_program_without_data_and_refuses_one_without_either(
        tmp_path, capsys) -> None:
    from sim.cli import main

    assert main(["run", str(write_case(tmp_path, data=False)), "--quiet"]) == 0
    capsys.readouterr()
    bare = tmp_path / "bare"
    bare.mkdir()
    assert main(["run", str(write_case(bare, inputs="", data=False)), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "[data]" in err[0], err
