"""Key flow (issue 27, class 5): honest keys that reach the coalition, and the exact method on the
program that runs.

Each planted program (:mod:`planted_keys`) hands the coalition {0} honest key material in one
extra message. An attack below recovers x̂_1 from party 0's view of a real run (X25519 keys,
sealed channels) with pycryptodome's AES as the PRG — independent of the project's PRG — so
each leak is real; then every method must answer ``leak`` (or ``not applicable``, never
``private``) and name the key and the message that carried it. Honest SecureSum stays
``private`` with no key flow; a key that masks nothing the coalition sees is named but the
verdict is the consequence (``private`` by the statistical method).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np
import planted_keys as pk
import pytest
from Crypto.Cipher import AES

from parties.party import site_parties
from protocols.context import AesRandomness, PartyContext, stream_number
from protocols.effects import Call, Input, Output
from protocols.field import prime_field
from protocols.secure_sum import secure_sum_field
from sim.network import Network
from sim.privacy import audit, secure_sum_program
from sim.runner import run_scenario
from sim.simulation import Simulation

P61 = (1 << 61) - 1
F61 = prime_field(P61)
F5 = prime_field(5)
INPUTS = [F61.elements([11, 12]), F61.elements([21, 22]), F61.elements([31, 32])]
DEBUG = "secure_sum#1.debug from 1 to 0"
LEAKS = sorted(pk.LEAKS)


# -- the attack: x̂_1 from party 0's view, with an independent AES ------------------------------


def aes_stream(key: bytes, stream: int, n: int, p: int = P61) -> list[int]:
    """n elements of GF(p) from AES-256-CTR(key) (nonce = stream, counter from 0): the
    little-endian 64-bit words masked to the bit length of p, values ≥ p rejected."""
    bits = p.bit_length()
    out: list[int] = []
    cipher = AES.new(key, AES.MODE_CTR, nonce=stream.to_bytes(8, "big"), initial_value=0)
    while len(out) < n:
        word = int.from_bytes(cipher.encrypt(bytes(8)), "little") & ((1 << bits) - 1)
        if word < p:
            out.append(word)
    return out


def real_run(program: Any) -> Any:
    """One run with X25519 key agreement and sealing: the deployment, not the audit."""
    simulation = Simulation(Network.build(3), prime=P61, seed=2027)
    return simulation.run(site_parties(program, [{"x": x} for x in INPUTS]))


def recover_x1(name: str, view: Any) -> list[int]:
    """What party 0 computes from its view alone: x̂_1."""
    debug = {m.sender: m for m in view.received if m.step == "debug"}
    colsum = next(m for m in view.received if m.step == "column_sum" and m.sender == 1)
    index, d = colsum.call, len(colsum.payload)
    stream = index << 16  # stream_number(call, 0)
    c1 = [int(v) for v in colsum.payload]
    payload = debug[1].payload
    if name == "private_keys":  # explicit: every share of 1 and 2 from their private keys
        own = bytes.fromhex(view.seeds["masks"])
        r0 = aes_stream(own, stream, 2 * d)            # party 0's shares: to 1, then to 2
        r1 = aes_stream(bytes(payload), stream, 2 * d)  # party 1's: to 0, then to 2
        r2 = aes_stream(bytes(debug[2].payload), stream, 2 * d)  # party 2's: to 0, then to 1
        return [(c1[i] + r1[i] + r1[d + i] - r0[i] - r2[d + i]) % P61 for i in range(d)]
    s01 = aes_stream(bytes.fromhex(view.seeds["pair_mask_seeds"][1]), stream, d)
    if name in ("pair_seed", "pair_seed_elements"):
        s12 = aes_stream(bytes(int(v) for v in payload), stream, d)
        mask = [(a - b) % P61 for a, b in zip(s12, s01, strict=True)]
    elif name == "keystream_block":
        words = np.frombuffer(bytes(payload), dtype="<u8")
        s12 = [int(w) & P61 for w in words[:d]]
        mask = [(a - b) % P61 for a, b in zip(s12, s01, strict=True)]
    elif name == "mask_plus_constant":
        mask = [(int(v) - pk.PLUS) % P61 for v in payload]
    else:
        mask = [int(v) ^ pk.XOR for v in payload]
    return [(c - m) % P61 for c, m in zip(c1, mask, strict=True)]


@pytest.mark.parametrize("name", LEAKS)
def test_the_coalition_recovers_the_honest_input_from_the_leaked_key(name: str) -> None:
    result = real_run(pk.LEAKS[name])
    expected = [int(v) for v in INPUTS[1]]
    assert recover_x1(name, result.views[0]) == expected
    total = [sum(int(x[i]) for x in INPUTS) % P61 for i in range(2)]
    assert [int(v) for v in result.outputs[0]] == total  # the sum is still right


# -- every method: leak or not applicable, naming the key and the message -----------------------


def _named(result: Any) -> set[str]:
    return {f["message"] for f in result.details.get("key_flow", ())}


@pytest.mark.parametrize("name", LEAKS)
@pytest.mark.parametrize("method", ["simulation", "statistical"])
def test_value_methods_catch_the_key_and_name_it(name: str, method: str) -> None:
    result = audit(pk.LEAKS[name], INPUTS, [0], prime="2^61-1", method=method, trials=60)
    assert result.verdict == "leak", result.details
    assert DEBUG in _named(result)
    assert "depends on the honest inputs" in result.details["key_flow_consequence"]


@pytest.mark.parametrize("name", LEAKS)
def test_the_linear_method_is_not_applicable_and_names_the_key(name: str) -> None:
    result = audit(pk.LEAKS[name], INPUTS, [0], prime="2^61-1", method="linear")
    assert result.verdict == "not applicable"
    assert DEBUG in _named(result) and "not affine" in result.details["reason"]


def test_the_key_is_named_by_what_it_is() -> None:
    result = audit(pk.LEAKS["pair_seed"], INPUTS, [0], prime="2^61-1", method="statistical",
                   trials=40)
    assert {"key": "pair seed of parties 1 and 2", "as": "raw bytes", "message": DEBUG,
            "received_by": 0} in result.details["key_flow"]
    block = audit(pk.LEAKS["keystream_block"], INPUTS, [0], prime="2^61-1",
                  method="statistical", trials=40)
    first = stream_number(Call("secure_sum", 1), 0)  # the program's first call (1, after
    assert [f["as"] for f in block.details["key_flow"]] == [  # key agreement's 0), sub 0
        f"first keystream block of stream {first}"]


@pytest.mark.parametrize("coalition", [[1], [2]])
def test_coalitions_that_never_receive_the_key_stay_private(coalition: list[int]) -> None:
    """Site 1 sends s_12's seed to site 0 only; {1} and {2} hold it anyway."""
    for method in ("simulation", "statistical"):
        result = audit(pk.LEAKS["pair_seed"], INPUTS, coalition, prime="2^61-1",
                       method=method, trials=60)
        assert result.verdict == "private" and "key_flow" not in result.details


def test_a_key_that_masks_nothing_the_coalition_sees_is_named_and_judged_by_consequence(
) -> None:
    """Party 1's private key gives {0} the shares r_1^(j); r_2^(1) still masks both honest
    column sums. The exact method, enumerating every key through the real AES expansion,
    answers the consequence — private — while the same message pattern with both honest keys
    leaks. The value-testing statistical method sees no dependence either, but cannot rule
    out secrets derived from the key beyond its draws: inconclusive, never private."""
    for p in (2, 3):
        field_ = prime_field(p)
        tiny = [field_.elements([v % p]) for v in (1, 0, 1)]
        harmless = audit(pk.HARMLESS["one_private_key"], tiny, [0], prime=p, method="exact",
                         max_runs=10**5)
        assert harmless.verdict == "private" and harmless.power["exact"] is True
        assert {f["key"] for f in harmless.details["key_flow"]} == {
            "private mask key of party 1"}
        assert "still reveals nothing" in harmless.details["key_flow_consequence"]
        both = audit(pk.LEAKS["private_keys"], tiny, [0], prime=p, method="exact",
                     max_runs=10**5)
        assert both.verdict == "leak" and both.message == "secure_sum#1.column_sum from 1 to 0"
    result = audit(pk.HARMLESS["one_private_key"], INPUTS, [0], prime="2^61-1",
                   method="statistical", trials=60)
    assert result.verdict == "inconclusive"
    assert "cannot answer private" in result.details["key_flow_consequence"]
    linear = audit(pk.HARMLESS["one_private_key"], INPUTS, [0], prime="2^61-1", method="linear")
    assert linear.verdict == "not applicable"
    simulation = audit(pk.HARMLESS["one_private_key"], INPUTS, [0], prime="2^61-1",
                       method="simulation", trials=60)
    assert simulation.verdict != "private"


@pytest.mark.parametrize("variant", ["prg", pytest.param("explicit", marks=pytest.mark.slow)])
def test_honest_secure_sum_has_no_key_flow_and_stays_private(variant: str) -> None:
    for coalition in ([0], [1], [2], [0, 1], [1, 2]):
        for method in ("simulation", "statistical"):
            result = audit(secure_sum_program(variant), INPUTS, coalition, prime="2^61-1",
                           method=method, trials=200)
            assert result.verdict == "private", (coalition, method)
            assert "key_flow" not in result.details


# -- the exact method runs the program that runs --------------------------------------------------


EXACT_INPUTS = [F5.elements([1]), F5.elements([3]), F5.elements([2])]


@pytest.mark.parametrize("name", ["pair_seed", "keystream_block", "mask_plus_constant",
                                  "mask_xor_constant"])
def test_exact_runs_the_aes_expansion_and_catches_the_leak(name: str) -> None:
    """Under the old tape the program found no mask seeds and could not run; now every
    leak is a difference of exact distributions in GF(5)."""
    result = audit(pk.LEAKS[name], EXACT_INPUTS, [0], prime=5, method="exact",
                   max_runs=20_000)
    assert result.verdict == "leak"
    assert result.details["randomness"] == "AES-CTR under enumerated keys"
    assert result.details["total_variation"] > 0


@pytest.mark.parametrize("coalition", [[0], [1], [2], [0, 1]])
def test_exact_honest_prg_is_private_under_enumerated_keys(coalition: list[int]) -> None:
    """The prg variant expands 32-byte pair seeds with AES; the keys are chosen so that
    every value of the d = 1 streams occurs once, so the honest program stays private."""
    result = audit(secure_sum_program("prg"), EXACT_INPUTS, coalition, prime=5,
                   method="exact", max_runs=20_000)
    assert result.verdict == "private" and result.power["exact"] is True
    honest_pairs = {(1, 2), (0, 2), (0, 1)} - {
        pair for pair in ((0, 1), (0, 2), (1, 2)) if set(pair) & set(coalition)}
    assert result.details["honest_tape_elements"] == len(honest_pairs)


def _own_expansion(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, np.ndarray]:
    """Honest SecureSum (prg) whose masks the program expands from ctx.mask_seeds itself."""
    from protocols.context import stream_number
    from protocols.crypto.keystream import field_stream

    call = pk.next_call(ctx)
    stream = stream_number(call, 0)
    masks = [field_stream(ctx.mask_seeds[p], stream, len(x), ctx.field) for p in ctx.peers]
    plus = [m for p, m in zip(ctx.peers, masks, strict=True) if ctx.party < p]
    minus = [m for p, m in zip(ctx.peers, masks, strict=True) if ctx.party > p]
    masked = ctx.field.combine([x, *plus], minus)
    from protocols.effects import RecvEach, SendEach

    call = ctx.new_call("secure_sum")
    yield Input("x", x, call)  # what it puts into the call, as SecureSum records it
    yield SendEach(dict.fromkeys(ctx.peers, masked), call, "column_sum")
    got = yield RecvEach(ctx.peers, call, "column_sum")
    total = ctx.field.sum_arrays([masked, *(got[p] for p in ctx.peers)])
    yield Output("sum", total, call)
    return total


def test_exact_is_not_applicable_when_the_program_expands_its_keys_itself() -> None:
    """Two keys with the same draws change the honest column sums: the audit cannot
    enumerate 2^256 keys, and says so rather than audit a tape in their place."""
    result = audit(_own_expansion, EXACT_INPUTS, [0], prime=5, method="exact", max_runs=20_000)
    assert result.verdict == "not applicable"
    assert "beyond the streams its randomness draws" in result.details["reason"]
    # the statistical method audits it at the real prime, and it is honest
    real = audit(_own_expansion, INPUTS, [0], prime="2^61-1", method="statistical", trials=40)
    assert real.verdict == "private"


def _long_seed(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, np.ndarray]:
    """SecAgg's pattern: a 256-bit seed drawn as field elements, expanded with AES."""
    call = pk.next_call(ctx)
    ctx.randomness.private(call, 128, sub=7)
    return (yield from secure_sum_field(ctx, x, "prg"))


def test_exact_is_not_applicable_when_a_key_expands_beyond_max_runs() -> None:
    result = audit(_long_seed, EXACT_INPUTS, [0], prime=5, method="exact", max_runs=20_000)
    assert result.verdict == "not applicable"
    assert "5^128 keys" in result.details["reason"]


# -- a scenario's [[audit]] ----------------------------------------------------------------------


def _planted_secure_sum(ctx: PartyContext, x: Any, variant: str = "prg", label: str = "x"
                        ) -> Generator[Any, Any, np.ndarray]:
    values = np.asarray(x, dtype=np.float64)
    x_hat = ctx.fixed.encode(values.ravel(), n_summands=ctx.n_parties, what=label)
    total = yield from pk.LEAKS["pair_seed"](ctx, x_hat)
    return ctx.fixed.decode(total).reshape(values.shape)


def test_a_scenario_audit_catches_the_pair_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The secure_sum entry running the planted program: [[audit]] by every method."""
    # The entry imports the program by name: patch it first, so that importing the entry here
    # binds the real program (which the patch then restores), not the planted one.
    monkeypatch.setattr("sim.experiments.secure_sum.secure_sum", _planted_secure_sum)
    monkeypatch.setattr("protocols.secure_sum.secure_sum", _planted_secure_sum)
    for where in ("sim.privacy", "sim.experiments.secure_sum"):  # the entry imports it by name
        monkeypatch.setattr(f"{where}.secure_sum_program",
                            lambda variant, label="x": pk.LEAKS["pair_seed"])
    audits = "".join(
        f'[[audit]]\ncoalition = [0]\nmethod = "{m}"\ntrials = 40\n'
        for m in ("simulation", "statistical", "linear"))
    scenario = (
        'name = "planted key"\nseed = 5\n[network]\nparties = 3\n[field]\nprime = "2^61-1"\n'
        '[data]\nsource = "synthetic"\nrows = 9\ncols = 2\n[algorithm]\nname = "secure_sum"\n'
        'variant = "prg"\n' + audits)
    import tomllib

    run = run_scenario(tomllib.loads(scenario))
    verdicts = {r.method: r for r in run.audits}
    assert verdicts["simulation"].verdict == "leak"
    assert verdicts["statistical"].verdict == "leak"
    assert verdicts["linear"].verdict == "not applicable"
    for r in verdicts.values():
        assert any(f["key"] == "pair seed of parties 1 and 2" for f in r.details["key_flow"])


# -- SecAgg: the aggregator receives a site's private key ----------------------------------------


SECAGG_INPUTS = [F61.elements([5, 6]), F61.elements([7, 8]), F61.elements([9, 10]),
                 F61.elements([11, 12])]


def test_the_aggregator_recovers_a_site_input_from_its_private_key() -> None:
    from protocols import secagg

    parties = pk.secagg_key_to_aggregator(SECAGG_INPUTS)
    result = Simulation(Network.build(5), prime=P61, seed=9).run(parties)
    view = result.views[4]
    got = {(m.sender, m.step): m for m in view.received}
    key = bytes(got[(1, "debug")].payload)
    index = got[(1, "masked_input")].call
    lsec = secagg.secret_length(F61)
    sk = aes_stream(key, index << 16, lsec)              # private stream 0 of the call
    b = aes_stream(key, (index << 16) + 1, lsec)         # private stream 1
    from protocols.effects import Call

    call = Call("secagg", index)
    public = {u: bytes(got[(u, "public_key")].payload) for u in range(4)}
    sk_arr = F61.elements(np.array(sk, dtype=object))
    b_arr = F61.elements(np.array(b, dtype=object))
    prg = AesRandomness(F61, bytes(32))  # the default random oracle: AES-CTR keyed by the seed
    masks = F61.add(secagg.self_mask(prg, b_arr, call, 2),
                    secagg.pair_masks(prg, F61, sk_arr, 1, {v: public[v] for v in (0, 2, 3)},
                                      call, 2))
    x1 = F61.sub(np.asarray(got[(1, "masked_input")].payload), masks)
    assert [int(v) for v in x1] == [int(v) for v in SECAGG_INPUTS[1]]


def test_secagg_audit_names_the_key_the_aggregator_holds() -> None:
    """The statistical method (SecAgg has no simulator) names the key and the message that
    carried it; the masks agreed from it change with the honest peers' fresh keys, so the A/B
    comparison alone sees nothing, and the unmasking test reads x̂_1 (test_unmasking)."""
    from parties.audit import statistical_audit
    from sim.privacy import SimPyRunner

    runner = SimPyRunner(P61, 0, 0, Network.build(5))
    result = statistical_audit(runner, lambda xs: pk.secagg_key_to_aggregator(list(xs)),
                               SECAGG_INPUTS, (4,), trials=20, seed=0, pairs=2)
    assert result.verdict == "leak"
    assert {f["key"] for f in result.details["key_flow"]} == {"private mask key of party 1"}
    assert {f["message"] for f in result.details["key_flow"]} == {"secagg#1.debug from 1 to 4"}


@pytest.mark.slow
def test_secagg_with_the_key_is_a_leak_even_with_the_power_to_say_private() -> None:
    """At 500 trials the A/B audit has the power to call the aggregator's view private
    (test_secagg); before key flow it did so here, and before the unmasking test it answered
    inconclusive, although the attack above recovers x̂_1."""
    from parties.audit import statistical_audit
    from sim.privacy import SimPyRunner

    runner = SimPyRunner(P61, 0, 0, Network.build(5))
    result = statistical_audit(runner, lambda xs: pk.secagg_key_to_aggregator(list(xs)),
                               SECAGG_INPUTS, (4,), trials=500, seed=0, pairs=2)
    assert result.verdict == "leak"
    assert result.details["unmasked"]["message"] == "secagg#1.masked_input from 1 to 4"
