"""Key flow, item 5 of issue 27: a held honest key is judged by what it unmasks.

Each plant (:mod:`planted_keyflow`) hands the coalition an honest key in a form of its own —
split over two members, XOR a public pad, in a later call, to SecAgg's aggregator. An attack
recovers x̂_1 from the coalition's views of a real run (X25519 key agreement, sealed channels),
with pycryptodome's AES as the PRG (independent of the project's), so every leak is real. The
value-testing methods must answer ``leak`` and name the key and the message that carried it;
for SecAgg, where holding the key fixed does not fix the masks agreed with the honest peers'
fresh keys, the verdict comes from the unmasking test, which also names the message it
unmasks. A seed sent to its own pair partner stays ``private``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import planted_keyflow as pkf
import planted_keys as pk
import pytest
from test_keyflow import P61, aes_stream

from parties.audit import statistical_audit
from parties.audit.unmasking import unmask
from parties.party import site_parties
from protocols.effects import Call
from protocols.field import prime_field
from sim.network import Network
from sim.privacy import SimPyRunner, audit
from sim.simulation import Simulation

F61 = prime_field(P61)
RNG = np.random.default_rng(np.random.SeedSequence(27, spawn_key=(5,)))
INPUTS = {n: [F61.random(RNG, 2) for _ in range(n)] for n in (3, 4)}
SECAGG_INPUTS = [F61.elements([5, 6]), F61.elements([7, 8]), F61.elements([9, 10]),
                 F61.elements([11, 12])]


def _run(program: Any, n: int) -> Any:
    simulation = Simulation(Network.build(n), prime=P61, seed=4242)
    return simulation.run(site_parties(program, [{"x": x} for x in INPUTS[n]]))


def _pair_seed(view: Any, peer: int) -> bytes:
    return bytes.fromhex(view.seeds["pair_mask_seeds"][peer])


def recover_x1(name: str, views: Any) -> list[int]:
    """x̂_1 from the coalition's views alone: c_1 = x̂_1 + Σ_{j>1} s_1j − s_01."""
    v0 = views[0]
    colsum = next(m for m in v0.received if m.step == "column_sum" and m.sender == 1)
    stream, d = colsum.call << 16, len(colsum.payload)
    debug = [m for m in v0.received if m.step == "debug"]
    if name == "key_halves":
        half = next(m for m in views[3].received if m.step == "debug")
        s12 = bytes(int(b) for b in debug[0].payload) + bytes(int(b) for b in half.payload)
        plus = [aes_stream(s12, stream, d), aes_stream(_pair_seed(views[3], 1), stream, d)]
    elif name == "xor_key":
        plus = [aes_stream(bytes(int(b) ^ pkf.PAD for b in debug[0].payload), stream, d)]
    else:
        plus = [aes_stream(bytes(int(b) for b in debug[0].payload), stream, d)]
    minus = aes_stream(_pair_seed(v0, 1), stream, d)
    return [(int(colsum.payload[i]) - sum(p[i] for p in plus) + minus[i]) % P61
            for i in range(d)]


@pytest.mark.parametrize("name", sorted(pkf.LEAKS))
def test_the_coalition_recovers_the_honest_input(name: str) -> None:
    program, n, _ = pkf.LEAKS[name]
    result = _run(program, n)
    assert recover_x1(name, result.views) == [int(v) for v in INPUTS[n][1]]
    total = [sum(int(x[i]) for x in INPUTS[n]) % P61 for i in range(2)]
    assert [int(v) for v in result.outputs[0]] == total


@pytest.mark.parametrize("name", sorted(pkf.LEAKS))
@pytest.mark.parametrize("method", ["simulation", "statistical"])
def test_value_methods_answer_leak_and_name_the_key(name: str, method: str) -> None:
    program, n, coalition = pkf.LEAKS[name]
    result = audit(program, INPUTS[n], coalition, prime="2^61-1", method=method, trials=60)
    assert result.verdict == "leak", result.details
    flow = result.details["key_flow"]
    assert {f["key"] for f in flow} == {"pair seed of parties 1 and 2"}
    carried = " + ".join(sorted({f["message"] for f in flow}))
    assert "debug" in carried and "from 1 to 0" in carried


def test_halves_are_named_with_both_messages() -> None:
    program, n, coalition = pkf.LEAKS["key_halves"]
    result = audit(program, INPUTS[n], coalition, prime="2^61-1", method="statistical",
                   trials=40)
    assert {"key": "pair seed of parties 1 and 2", "as": "raw bytes in pieces",
            "message": "secure_sum#1.debug from 1 to 0 + secure_sum#1.debug from 1 to 3",
            "received_by": 0} in result.details["key_flow"]
    linear = audit(program, INPUTS[n], coalition, prime="2^61-1", method="linear")
    assert linear.verdict == "not applicable"


@pytest.mark.parametrize("coalition", [[0], [1], [2]])
@pytest.mark.parametrize("method", ["simulation", "statistical"])
def test_a_seed_sent_to_its_other_holder_stays_private(coalition: list[int],
                                                       method: str) -> None:
    result = audit(pkf.seed_to_partner, INPUTS[3], coalition, prime="2^61-1", method=method,
                   trials=200)
    assert result.verdict == "private", result.details
    assert "key_flow" not in result.details


# -- SecAgg: the aggregator holds a site's key ---------------------------------------------------


def _secagg_x1(view: Any) -> list[int]:
    """What the aggregator computes from its view (as test_keyflow's attack, key later)."""
    from protocols import secagg
    from protocols.context import AesRandomness

    got = {(m.sender, m.step): m for m in view.received}
    key = bytes(int(b) for b in got[(1, "debug")].payload)
    index = got[(1, "masked_input")].call
    lsec = secagg.secret_length(F61)
    sk = F61.elements(np.array(aes_stream(key, index << 16, lsec), dtype=object))
    b = F61.elements(np.array(aes_stream(key, (index << 16) + 1, lsec), dtype=object))
    call = Call("secagg", index)
    public = {u: bytes(got[(u, "public_key")].payload) for u in range(4)}
    prg = AesRandomness(F61, bytes(32))
    masks = F61.add(secagg.self_mask(prg, b, call, 2),
                    secagg.pair_masks(prg, F61, sk, 1, {v: public[v] for v in (0, 2, 3)},
                                      call, 2))
    return [int(v) for v in F61.sub(np.asarray(got[(1, "masked_input")].payload), masks)]


def test_the_aggregator_recovers_x1_from_a_key_sent_after_the_protocol() -> None:
    parties = pkf.secagg_key_later(SECAGG_INPUTS)
    result = Simulation(Network.build(5), prime=P61, seed=9).run(parties)
    assert _secagg_x1(result.views[4]) == [int(v) for v in SECAGG_INPUTS[1]]


@pytest.mark.parametrize("build", [pk.secagg_key_to_aggregator, pkf.secagg_key_later])
def test_secagg_with_a_site_key_at_the_aggregator_is_a_leak(build: Any) -> None:
    """Holding the key fixed leaves the agreed pair masks fresh, so the A/B comparison sees
    no dependence (before: inconclusive); the unmasking test recomputes them from the key
    and the relayed public keys and reads x̂_1 from the masked input."""
    runner = SimPyRunner(P61, 0, 0, Network.build(5))
    result = statistical_audit(runner, lambda xs: build(list(xs)), SECAGG_INPUTS, (4,),
                               trials=20, seed=0, pairs=2)
    assert result.verdict == "leak", result.details
    assert result.message == "secagg#1.masked_input from 1 to 4"
    assert result.details["unmasked"]["honest_input_of"] == [1]
    assert {f["key"] for f in result.details["key_flow"]} == {"private mask key of party 1"}


def test_unmasking_reads_exactly_the_site_whose_key_is_held() -> None:
    """On honest SecAgg, crediting the aggregator with site u's key unmasks site u's masked
    input and no other; crediting it with nothing unmasks nothing."""
    from parties.audit.keyflow import KeyFlow, trace
    from parties.party import Party
    from protocols.secagg import Config, secagg_aggregator, secagg_field

    config = Config(threshold=3)

    def site(ctx: Any, x: np.ndarray) -> Any:
        return (yield from secagg_field(ctx, x, config))

    def aggregator(ctx: Any, length: int) -> Any:
        return (yield from secagg_aggregator(ctx, length, config))

    parties = [Party(u, site, {"x": x}) for u, x in enumerate(SECAGG_INPUTS)] + [
        Party(4, aggregator, {"length": 2}, role="aggregator")]
    runner = SimPyRunner(P61, 0, 0, Network.build(5))
    assert not trace(runner, parties, [4], 0).beyond_draws
    assert unmask(runner, parties, [4], 0, KeyFlow()) is None
    for u in (1, 2):
        found = unmask(runner, parties, [4], 0, KeyFlow(known_keys=frozenset({("private", u)})))
        assert found is not None and found.parties == (u,)
        assert found.message == f"secagg#1.masked_input from {u} to 4"
