"""Tests of :mod:`sim.simulation`: key setups, seeds, replay, roles and the Result.

Reproducibility is checked as DESIGN.md states it: the same seed gives a byte-identical
ledger CSV and equal views and outputs; another seed gives other masks; a run without a seed
records the entropy it drew, and replaying with it reproduces the run.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np
import pytest
from Crypto.Hash import SHA256
from Crypto.Protocol.KDF import HKDF

from parties.party import Party, site_parties
from parties.view import View
from protocols.context import PartyContext
from protocols.effects import Recv, RecvEach, Send, SendEach
from protocols.errors import InputError, ProtocolAbort
from protocols.secure_sum import secure_sum
from sim.network import Network
from sim.simulation import SEED_SALT, Result, Simulation, party_seed


def sum_program(variant: str):
    def program(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
        return (yield from secure_sum(ctx, x, variant))  # type: ignore[arg-type]

    return program


def parties(variant: str = "prg", m: int = 3, d: int = 4) -> list[Party]:
    return site_parties(sum_program(variant), [{"x": np.arange(d) * 0.5 + i} for i in range(m)])


def expected_sum(m: int = 3, d: int = 4) -> list[float]:
    return [float(sum(j * 0.5 + i for i in range(m))) for j in range(d)]


def signature(view: View) -> tuple:
    def plain(v: Any) -> Any:
        if isinstance(v, np.ndarray | np.generic):
            return (str(np.asarray(v).dtype), np.asarray(v).tolist())
        if isinstance(v, dict):
            return tuple(sorted((str(k), plain(x)) for k, x in v.items()))
        if isinstance(v, list | tuple):
            return tuple(plain(x) for x in v)
        return v

    return (view.party, view.role, plain(view.inputs), plain(view.seeds),
            tuple((m.sender, m.protocol, m.call, m.step, m.round, plain(m.payload))
                  for m in view.received),
            tuple((c, label, plain(v)) for c, label, v in view.protocol_inputs),
            tuple((c, label, plain(v)) for c, label, v in view.outputs),
            tuple((key, plain(v)) for key, v in view.draws))


def masked_payloads(result: Result) -> list:
    return [m.payload.tolist() for v in result.views.values() for m in v.received
            if m.protocol == "secure_sum"]


# -- key setups --------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["prg", "explicit"])
def test_x25519_runs_key_agreement_first(variant: str) -> None:
    result = Simulation(Network.build(3), seed=1).run(parties(variant))
    protocols = [r.protocol for r in result.ledger]
    assert protocols[:6] == ["key_agreement"] * 6
    assert set(protocols[6:]) == {"secure_sum"}
    assert result.outputs[2].tolist() == expected_sum()


@pytest.mark.parametrize("variant", ["prg", "explicit"])
@pytest.mark.parametrize("sealing", [True, False])
def test_preshared_keys_send_no_key_agreement_messages(variant: str, sealing: bool) -> None:
    result = Simulation(Network.build(3), seed=1, keys="preshared", sealing=sealing).run(
        parties(variant))
    assert {r.protocol for r in result.ledger} == {"secure_sum"}
    assert min(r.round for r in result.ledger) == 1  # nothing came before
    assert result.outputs[0].tolist() == expected_sum()
    seeds = {p: result.views[p].seeds["pair_mask_seeds"] for p in range(3)}
    for a in range(3):
        for b in seeds[a]:
            assert seeds[a][b] == seeds[b][a]  # both ends hold the pair's seed
    assert seeds[0][1] != seeds[0][2]


def test_preshared_keys_depend_on_the_seed() -> None:
    a = Simulation(Network.build(3), seed=1, keys="preshared").run(parties())
    b = Simulation(Network.build(3), seed=2, keys="preshared").run(parties())
    assert a.views[0].seeds["pair_mask_seeds"] != b.views[0].seeds["pair_mask_seeds"]
    assert masked_payloads(a) != masked_payloads(b)


@pytest.mark.parametrize("ids", [[0, 1], [4, 0, 2], list(range(7)), [3, 2**33, 2**61 + 5]])
def test_preshared_keys_are_aes_of_each_pairs_four_blocks(ids: list[int]) -> None:
    """Pair {lo, hi}'s 64 bytes are AES-256-ECB, under the run's pre-shared master key, of the
    blocks (j·2^62 + lo, hi), j = 0..3 (big-endian words): the channel key, then the mask
    seed — built here pair by pair with Python ints."""
    from Crypto.Cipher import AES

    from sim.simulation import preshared_keys, run_key

    master = run_key(11, "preshared")
    expected = {}
    for i, lo in enumerate(sorted(ids)):
        for hi in sorted(ids)[i + 1 :]:
            blocks = b"".join(((j << 62) | lo).to_bytes(8, "big") + hi.to_bytes(8, "big")
                              for j in range(4))
            material = AES.new(master, AES.MODE_ECB).encrypt(blocks)
            expected[(lo, hi)] = (material[:32], material[32:])
    got = preshared_keys(11, ids)
    assert got == expected and list(got) == list(expected)


def test_keys_none_supports_explicit_shares_but_not_pairwise_masks() -> None:
    sim = Simulation(Network.build(3), seed=1, keys="none", sealing=False)
    result = sim.run(parties("explicit"))
    assert result.outputs[1].tolist() == expected_sum()
    assert {r.protocol for r in result.ledger} == {"secure_sum"}
    assert "pair_mask_seeds" not in result.views[0].seeds
    with pytest.raises(ProtocolAbort, match="no mask seed"):
        sim.run(parties("prg"))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"keys": "none"}, "sealing"),  # sealing on by default
        ({"keys": "rsa"}, "keys"),
        ({"seed": -1}, "seed"),
        ({"seed": 1.5}, "seed"),
        ({"seed": True}, "seed"),
        ({"prime": "2^61"}, "prime"),
        ({"frac_bits": 80}, "frac_bits"),
    ],
)
def test_bad_simulation_arguments(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(InputError, match=match):
        Simulation(Network.build(2), **kwargs)


# -- reproducibility ---------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["prg", "explicit"])
def test_same_seed_replays_byte_for_byte(variant: str) -> None:
    runs = [Simulation(Network.build(4), seed=123, record_draws=True).run(parties(variant, 4))
            for _ in range(2)]
    a, b = runs
    assert a.ledger.to_csv() == b.ledger.to_csv()
    assert a.ledger.to_csv().encode() == b.ledger.to_csv().encode()
    for p in range(4):
        assert signature(a.views[p]) == signature(b.views[p])
        assert a.outputs[p].tolist() == b.outputs[p].tolist()
    assert a.seed == b.seed == 123
    assert a.simulated_s == b.simulated_s


@pytest.mark.parametrize("variant", ["prg", "explicit"])
def test_different_seed_gives_different_masks(variant: str) -> None:
    a = Simulation(Network.build(3), seed=1, record_draws=True).run(parties(variant))
    b = Simulation(Network.build(3), seed=2, record_draws=True).run(parties(variant))
    assert a.outputs[0].tolist() == b.outputs[0].tolist() == expected_sum()
    draws_a = {int(v) for view in a.views.values() for _, arr in view.draws for v in arr}
    draws_b = {int(v) for view in b.views.values() for _, arr in view.draws for v in arr}
    assert draws_a and draws_a.isdisjoint(draws_b)
    assert masked_payloads(a) != masked_payloads(b)
    assert a.ledger.to_csv() == b.ledger.to_csv()  # the communication itself is the same


def test_a_run_seed_overrides_the_simulation_seed() -> None:
    sim = Simulation(Network.build(3), seed=1)
    assert sim.run(parties(), seed=5).seed == 5
    assert masked_payloads(sim.run(parties(), seed=5)) == masked_payloads(
        Simulation(Network.build(3), seed=5).run(parties()))


def test_no_seed_draws_entropy_records_it_and_replays_with_it() -> None:
    sim = Simulation(Network.build(3))
    first = sim.run(parties())
    second = sim.run(parties())
    assert isinstance(first.seed, int) and first.seed >= 0
    assert first.seed != second.seed  # fresh entropy each time
    assert masked_payloads(first) != masked_payloads(second)
    assert first.seed not in plain_values(first.views[0].seeds)  # the caller's, no party's
    replay = Simulation(Network.build(3), seed=first.seed).run(parties())
    assert replay.ledger.to_csv() == first.ledger.to_csv()
    for p in range(3):
        assert signature(replay.views[p]) == signature(first.views[p])
    also = Simulation(Network.build(3)).run(parties(), seed=first.seed)
    assert masked_payloads(also) == masked_payloads(first)


def hkdf_reference(run_seed: int, party: int, purpose: str) -> bytes:
    """The documented derivation, with pycryptodome's HKDF (independent of the code)."""

    def field(tag: bytes, raw: bytes) -> bytes:
        return tag + len(raw).to_bytes(4, "big") + raw

    info = (field(b"s", b"party") + field(b"i", party.to_bytes(8, "big"))
            + field(b"s", purpose.encode()))
    ikm = run_seed.to_bytes(max(1, (run_seed.bit_length() + 7) // 8), "big")
    return HKDF(ikm, 32, SEED_SALT, SHA256, context=info)


def plain_values(seeds: dict[str, Any]) -> list[Any]:
    return [v for value in seeds.values()
            for v in (value.values() if isinstance(value, dict) else [value])]


def test_views_record_each_partys_own_derived_seeds_and_never_the_run_seed() -> None:
    result = Simulation(Network.build(3), seed=77).run(parties())
    for p in range(3):
        seeds = result.views[p].seeds
        assert seeds["key_source"] == "seed"
        for purpose in ("rng", "x25519", "masks"):
            assert seeds[purpose] == hkdf_reference(77, p, purpose).hex()
        assert 77 not in plain_values(seeds) and "77" not in plain_values(seeds)
    # the derived material differs per party and per purpose, and is a function of them
    material = {(p, k): party_seed(77, p, k) for p in range(3)
                for k in ("rng", "x25519", "masks")}
    assert len(set(material.values())) == 9
    assert all(len(v) == 32 for v in material.values())
    assert party_seed(77, 1, "masks") == party_seed(77, 1, "masks") != party_seed(78, 1, "masks")
    # typed, length-prefixed info: (party 1, "2x") and (party 12, "x") cannot meet
    from protocols.seeds import info

    assert info("party", 1, "2x") != info("party", 12, "x")
    assert info("party", 1, "2x") == (b"s\x00\x00\x00\x05party" + b"i\x00\x00\x00\x08"
                                      + (1).to_bytes(8, "big") + b"s\x00\x00\x00\x022x")


def test_party_rng_is_seeded_with_its_own_derived_value() -> None:
    def draw(ctx: PartyContext) -> Generator[Any, Any, Any]:
        return (float(ctx.rng.random()), int(ctx.rng.bit_generator.seed_seq.entropy))
        yield  # pragma: no cover

    sim = Simulation(Network.build(3), seed=9, keys="none", sealing=False)
    a = sim.run([Party(p, draw) for p in range(3)])
    b = sim.run([Party(p, draw) for p in range(3)])
    assert a.outputs == b.outputs
    assert len({v for v, _ in a.outputs.values()}) == 3
    own = int.from_bytes(hkdf_reference(9, 1, "rng"), "big")
    expected = np.random.default_rng(np.random.SeedSequence(own)).random()
    assert a.outputs[1] == (expected, own)  # the entropy a program can read is its own
    assert all(entropy != 9 for _, entropy in a.outputs.values())


def test_os_key_source_draws_fresh_keys_every_run_with_the_same_outputs() -> None:
    sim = Simulation(Network.build(3), seed=5, key_source="os", record_draws=True)
    a, b = sim.run(parties()), sim.run(parties())
    assert a.outputs[0].tolist() == b.outputs[0].tolist() == expected_sum()
    assert a.ledger.to_csv() == b.ledger.to_csv()  # the same communication
    for p in range(3):
        sa, sb = a.views[p].seeds, b.views[p].seeds
        assert sa["key_source"] == "os"
        assert sa["rng"] == sb["rng"]  # local random choices still replay
        assert sa["x25519"] != sb["x25519"] and sa["masks"] != sb["masks"]
        assert sa["x25519"] != hkdf_reference(5, p, "x25519").hex()
        assert sa["pair_mask_seeds"] != sb["pair_mask_seeds"]
    assert masked_payloads(a) != masked_payloads(b)
    seeded = Simulation(Network.build(3), seed=5, keys="preshared")
    assert seeded.run(parties()).views[0].seeds == seeded.run(parties()).views[0].seeds
    fresh = Simulation(Network.build(3), seed=5, keys="preshared", key_source="os")
    assert (fresh.run(parties()).views[0].seeds["pair_mask_seeds"]
            != fresh.run(parties()).views[0].seeds["pair_mask_seeds"])
    with pytest.raises(InputError, match="key_source"):
        Simulation(Network.build(3), key_source="urandom")


# -- roles, parties and the Result --------------------------------------------------------


def test_other_roles_take_the_ids_after_the_sites_and_join_the_network() -> None:
    """Two sites send to an aggregator (id 2), which broadcasts the total back."""

    def site(ctx: PartyContext, x: float) -> Generator[Any, Any, Any]:
        call = ctx.new_call("agg")
        yield Send(2, np.array([x]), call, "x")
        total = yield Recv(2, call, "total")
        return float(total[0])

    def aggregator(ctx: PartyContext) -> Generator[Any, Any, Any]:
        call = ctx.new_call("agg")
        got = yield RecvEach(ctx.parties, call, "x")
        total = np.array([sum(float(v[0]) for v in got.values())])
        yield SendEach(dict.fromkeys(ctx.parties, total), call, "total")
        return ctx.role

    everyone = [Party(0, site, {"x": 1.5}), Party(1, site, {"x": 2.0}),
                Party(2, aggregator, role="aggregator")]
    net = Network.build(2, "star")
    result = Simulation(net, seed=3).run(everyone)
    assert result.outputs == {0: 3.5, 1: 3.5, 2: "aggregator"}
    assert result.roles == {0: "site", 1: "site", 2: "aggregator"}
    assert result.sites == (0, 1)
    result.roles[2] = "site"  # the caller's copy: the next run is unaffected
    assert Simulation(net, seed=3).run(everyone).roles[2] == "aggregator"
    assert 2 not in net.graph  # the configured network is left as given
    agg_rows = [r for r in result.ledger if r.protocol == "agg"]
    assert all(r.hops == 2 for r in agg_rows)  # the aggregator was attached to the hub
    # key agreement covered the aggregator too
    ka = {(r.sender, r.receiver) for r in result.ledger if r.protocol == "key_agreement"}
    assert ka == {(a, b) for a in range(3) for b in range(3) if a != b}


@pytest.mark.parametrize(
    "ids_roles",
    [
        [(0, "site"), (0, "site")],
        [(1, "site"), (2, "site")],
        [(0, "site"), (1, "site"), (3, "aggregator")],
        [(0, "aggregator"), (1, "site")],
        [(0, "aggregator")],
    ],
)
def test_party_ids_must_follow_the_convention(ids_roles: list[tuple[int, str]]) -> None:
    def noop(ctx: PartyContext) -> Generator[Any, Any, Any]:
        return None
        yield  # pragma: no cover

    with pytest.raises(InputError):
        Simulation(seed=1, keys="none", sealing=False).run(
            [Party(i, noop, role=r) for i, r in ids_roles])


def test_inputs_are_recorded_in_views_and_coalitions_pool_them() -> None:
    result = Simulation(Network.build(3), seed=1).run(parties())
    assert result.views[1].inputs["x"].tolist() == (np.arange(4) * 0.5 + 1).tolist()
    coalition = result.coalition([2, 0])
    assert coalition.members == (0, 2)
    assert set(coalition.inputs()) == {0, 2}
    assert len(coalition.received()) == len(result.views[0].received) + len(
        result.views[2].received)
    with pytest.raises(InputError, match="coalition"):
        result.coalition([0, 5])


def test_simulated_time_is_the_last_delivery() -> None:
    result = Simulation(Network.build(3, latency_ms=5.0), seed=1).run(parties())
    assert result.simulated_s == max(r.delivered_s for r in result.ledger)
    assert result.simulated_s > 0.010  # two sequential rounds of at least 5 ms each


@pytest.mark.parametrize("variant", ["prg", "prg_two_share", "explicit"])
def test_recorded_draws_are_the_ctr_streams_of_the_partys_keys(variant: str) -> None:
    """Every recorded draw is, element for element, pycryptodome's AES-256-CTR keystream of
    the party's key for it (its private mask key, or the pair's mask seed; nonce: the stream
    number), masked to 61 bits with rejection — computed here without the project's PRG,
    whose parties keep their AES encryptors."""
    from Crypto.Cipher import AES

    from protocols.context import STREAMS_PER_CALL

    p = (1 << 61) - 1
    result = Simulation(Network.build(3), seed=9, record_draws=True).run(parties(variant))
    checked = set()
    for view in result.views.values():
        seeds = {peer: bytes.fromhex(s) for peer, s in view.seeds["pair_mask_seeds"].items()}
        for key, values in view.draws:
            if key[0] == "pair":
                _, lo, hi, _protocol, index, sub = key
                seed = seeds[hi if lo == view.party else lo]
            else:
                _, _party, _protocol, index, sub = key
                seed = bytes.fromhex(view.seeds["masks"])
            nonce = (index * STREAMS_PER_CALL + sub).to_bytes(8, "big")
            stream = AES.new(seed, AES.MODE_CTR, nonce=nonce, initial_value=0).encrypt(
                bytes(16 * len(values) + 64))
            words = [int.from_bytes(stream[i : i + 8], "little") & p
                     for i in range(0, len(stream), 8)]
            assert [int(v) for v in values] == [w for w in words if w != p][: len(values)]
            checked.add(key[0])
    assert checked == ({"private"} if variant == "explicit" else {"pair"})
