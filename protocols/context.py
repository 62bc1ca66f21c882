"""What a party program sees: its :class:`PartyContext`, and the randomness it draws.

A program never holds another party's object. Its context carries its id and role, the ids
of the data-holding parties, the field and fixed-point precision, its own numpy generator for
local random choices, and its :class:`Randomness` — the source of field-element masks. Every
other fact a party learns arrives through a ``Recv`` effect, which is what makes its view
complete.

Randomness is injected (DESIGN.md): by default masks come from AES-CTR streams
(:mod:`protocols.crypto.keystream`) keyed by the party's private key or by the seed it shares with a
peer (after key agreement), numbered by the call counter so that every invocation draws fresh
masks. An audit may substitute another :class:`Randomness` — for instance, one that enumerates
every mask in a tiny field.

Trust boundary. A context is this party's alone: nothing reachable from it through
attributes, items, closures or bound methods leads to another party's state or to the run
seed. Its generator is seeded with the party's own derived seed (so
``rng.bit_generator.seed_seq.entropy`` is that seed, never the run's), its roles are a
read-only copy, its field and fixed point are its own objects (the field refuses assignment),
its keys are its own pairs' keys, and the AES encryptors its randomness keeps for them
(:class:`protocols.crypto.keystream.StreamCiphers`) are built by that randomness alone. Python
cannot sandbox a program in one process: the garbage collector (``gc.get_referrers``,
``gc.get_objects``), frame walking (``sys._getframe``, ``f_back``) and monkeypatching shared
modules reach past any context, and are outside the model; the MPI driver's one process per
party closes them. A program that writes into its
own context's private state changes only its own behaviour and records. README, "Trust
boundary", lists the guarantees and the tests in ``tests/isolation`` that attack them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from types import MappingProxyType
from typing import Protocol

import numpy as np

from protocols import seeds
from protocols.crypto import mask_sums
from protocols.crypto.keystream import StreamCiphers, field_stream
from protocols.crypto.mask_sums import SignedKeys
from protocols.effects import Call
from protocols.errors import MpcsimError
from protocols.field import FixedPoint, PrimeField
from protocols.sharing import one_stream_mask_from_streams

STREAMS_PER_CALL = 1 << 16


class MaskReuseError(MpcsimError):
    """A program asked for the same mask stream twice (masks must never be reused)."""


class Randomness(Protocol):
    """A source of uniform field elements for one party.

    ``private`` streams are known to the party alone; ``pairwise`` streams are known to the
    party and ``peer`` (both obtain the same elements for the same call and ``sub``).
    """

    def private(self, call: Call, n: int, sub: int = 0) -> np.ndarray: ...

    def pairwise(self, peer: int, call: Call, n: int, sub: int = 0) -> np.ndarray: ...

    def pairwise_many(
        self, peers: tuple[int, ...], call: Call, n: int, sub: int = 0
    ) -> np.ndarray:
        """Row k is ``pairwise(peers[k], call, n, sub)``; shape (len(peers), n)."""
        ...

    def pairwise_mask(
        self, peers: tuple[int, ...], call: Call, half: int, sub: int = 0
    ) -> np.ndarray:
        """The net pairwise mask: :func:`protocols.sharing.pairwise_mask_from_streams` of the
        2·half streams."""
        ...

    def expand(self, seed: Seed, call: Call, n: int) -> np.ndarray:
        """PRG(seed) for ``call``: n elements of the stream a seed stands for.

        ``seed`` is 32 bytes, or a vector of field elements (a Shamir-shared secret), which
        stands for the key :func:`seed_key` (SHA-256 of its values). A random oracle in the
        protocols' proofs (SecAgg's PRG(b_u) and PRG(s_{u,v}), Bonawitz et al. CCS 2017, §6):
        every party that holds the seed gets the same stream, whoever drew the seed. The
        default (:class:`AesRandomness`) is AES-256-CTR keyed by the seed, stream
        ``call.index`` (:func:`expand_stream` is its one definition); an audit may program it
        (:class:`parties.audit.randomness.AffineOracle`).
        """
        ...


def one_stream_mask(
    randomness: Randomness, party: int, peers: tuple[int, ...], call: Call, n: int,
    field: PrimeField, sub: int = 0,
) -> np.ndarray:
    """The one-stream pairwise mask of ``party`` (:func:`one_stream_mask_from_streams`).

    With the default :class:`AesRandomness` the streams are never materialised
    (:meth:`AesRandomness.pairwise_signed_sum`); any other source (an audit's tape, the
    recording wrapper) is asked for the streams, one n-element stream per pair, so that it
    sees and records exactly the streams the mask is made of.
    """
    if isinstance(randomness, AesRandomness):
        return randomness.pairwise_signed_sum(peers, call, n, sub)
    streams = randomness.pairwise_many(peers, call, n, sub)
    return one_stream_mask_from_streams(field, party, peers, streams)


def add_one_stream_mask(
    randomness: Randomness, party: int, peers: tuple[int, ...], call: Call,
    x_hat: np.ndarray, field: PrimeField, sub: int = 0,
) -> np.ndarray:
    """x̂ + the one-stream pairwise mask of ``party``: SecureSum's column sum (``prg``).

    Equal to ``field.add(x_hat, one_stream_mask(...))``. With the default
    :class:`AesRandomness` the mask is added in the pass that sums the streams
    (:meth:`AesRandomness.add_pairwise_signed_sum`); any other source is asked for the streams
    through :func:`one_stream_mask`, so that it sees and records them.
    """
    if type(randomness) is AesRandomness:
        return randomness.add_pairwise_signed_sum(x_hat, peers, call, sub)
    return field.add(x_hat, one_stream_mask(randomness, party, peers, call, len(x_hat), field,
                                            sub))


Seed = bytes | np.ndarray
"""What :meth:`Randomness.expand` expands: 32 key bytes, or a vector of field elements."""


def seed_key(elements: np.ndarray) -> bytes:
    """The 32-byte key a vector of field elements stands for: SHA-256 of their values, each
    as 32 big-endian bytes."""
    digest = hashlib.sha256()
    for v in np.asarray(elements).tolist():
        digest.update(int(v).to_bytes(32, "big"))
    return digest.digest()


def expand_stream(seed: Seed, call: Call, n: int, field: PrimeField,
                  ciphers: StreamCiphers | None = None) -> np.ndarray:
    """The default :meth:`Randomness.expand`: AES-256-CTR keyed by ``seed`` (a vector of
    elements: by :func:`seed_key`), stream ``call.index``
    (:func:`protocols.crypto.keystream.field_stream`), through ``ciphers`` when given."""
    key = seed if isinstance(seed, bytes) else seed_key(seed)
    if ciphers is None:
        return field_stream(key, call.index, n, field)
    return ciphers.field_stream(key, call.index, n, field)


def affine_generator(call: Call, n: int, k: int, field: PrimeField) -> np.ndarray:
    """G (n × k) of :func:`affine_expansion` for seeds of k elements in ``call``."""
    return field_stream(bytes(32), call.index, n * k, field).reshape(n, k)


def affine_expansion(seed: np.ndarray, call: Call, n: int, field: PrimeField,
                     generator: np.ndarray | None = None) -> np.ndarray:
    """G·seed over GF(p): a PRG that is linear in a seed of field elements.

    G (n × len(seed)) is public, the same for every party: field elements of the AES stream
    of the all-zero key, stream ``call.index``. An audit may program :meth:`Randomness.expand`
    with it (:class:`parties.audit.randomness.AffineOracle`): a seed drawn afresh still
    gives fresh masks on G's column space, and what a coalition unmasks with a reconstructed
    seed becomes affine in the shares it holds, which the linear tests can see.

    ``generator`` is G when the caller already holds it (:func:`affine_generator`).
    """
    seed = np.asarray(seed)
    g = affine_generator(call, n, len(seed), field) if generator is None else generator
    if not len(seed):
        return field.zeros(n)
    # one product and one row sum (exact, so the same elements as a sum of per-column terms)
    return field.sum(field.mul(g, np.asarray(seed, dtype=field.dtype)[None, :]), axis=1)


def expand_many(randomness: Randomness, seeds: list[bytes], call: Call, n: int,
                field: PrimeField) -> np.ndarray:
    """Row k is ``randomness.expand(seeds[k], call, n)``; shape (len(seeds), n).

    The default :class:`AesRandomness` draws the rows in one batch
    (:func:`protocols.crypto.keystream.field_streams`); any other source is asked seed by seed, so
    that it serves (and may record or program) every expansion.
    """
    if not seeds:
        return field.zeros((0, n))
    if type(randomness) is AesRandomness:
        return randomness.ciphers.field_streams(seeds, call.index, n, field)
    return np.stack([randomness.expand(s, call, n) for s in seeds])


def stream_number(call: Call, sub: int) -> int:
    """The PRG stream number of sub-stream ``sub`` of ``call``."""
    if not 0 <= sub < STREAMS_PER_CALL:
        raise ValueError(f"sub-stream {sub} is out of range [0, {STREAMS_PER_CALL})")
    return call.index * STREAMS_PER_CALL + sub


class AesRandomness:
    """Default randomness: AES-CTR streams keyed by the party's keys.

    Parameters
    ----------
    field : PrimeField
        The field the elements belong to.
    private_key : bytes
        32-byte key of the party's private streams.
    party : int
        The party these streams belong to (it orients the pairs in :meth:`pairwise_mask`).
    """

    def __init__(self, field: PrimeField, private_key: bytes, party: int = 0) -> None:
        self.field = field
        self.party = party
        self._private_key = private_key
        self._pair_seeds: dict[int, bytes] = {}
        # the owners of each stream drawn so far, one bit each (bit 0: this party's private
        # stream, bit p + 1: the one shared with party p): an int per stream rather than a
        # tuple per (owner, stream), which made 28 MB per rank at M = 256 (PD-NMF, 2 ranks)
        self._used: dict[int, int] = {}
        self._peer_bits: tuple[tuple[int, ...], int] | None = None
        self._ciphers: StreamCiphers | None = None
        self._signed: tuple[int, tuple[int, ...], SignedKeys] | None = None

    @property
    def ciphers(self) -> StreamCiphers:
        """This party's AES encryptors: one per key it draws under again, created lazily.

        They are this party's own key material, like the keys themselves: built here from its
        keys, never shared with another party's randomness.
        """
        if self._ciphers is None:
            self._ciphers = StreamCiphers()
        return self._ciphers

    @property
    def pair_seeds(self) -> Mapping[int, bytes]:
        """The mask seeds installed so far, peer → seed (a read-only view).

        An audit that injects this randomness (keys = "none") hands them to the party's
        context as its ``mask_seeds``, where key agreement would have put them, so that the
        program it audits is the one that runs (:mod:`parties.audit.keyflow`).
        """
        return MappingProxyType(self._pair_seeds)

    def set_pair_seed(self, peer: int, seed: bytes) -> None:
        """Install the mask seed shared with ``peer`` (done by key agreement)."""
        self._pair_seeds[peer] = seed
        self._signed = None  # the signed keys are worked out again with the new seed

    def set_pair_seeds(self, seeds: Mapping[int, bytes]) -> None:
        """:meth:`set_pair_seed` for every peer of ``seeds`` (peer → seed) at once."""
        self._pair_seeds.update(seeds)
        self._signed = None

    def _claim(self, owner: int, stream: int) -> None:
        """Record that ``owner``'s stream ``stream`` (owner −1: the private one) is drawn; a
        second draw raises :class:`MaskReuseError`."""
        drawn = self._used.get(stream, 0)
        bit = 1 << (owner + 1)
        if drawn & bit:
            raise MaskReuseError(
                f"mask stream {stream} ({'private' if owner < 0 else f'shared with {owner}'}) "
                "was requested twice; pass a distinct `sub` for each draw within a call"
            )
        self._used[stream] = drawn | bit

    def _claim_all(self, peers: tuple[int, ...], stream: int) -> None:
        """:meth:`_claim` for every peer's stream ``stream`` at once (the peers' bits worked
        out once per ``peers`` tuple; a tuple naming a peer twice is claimed one by one, and
        so raises at the second)."""
        cached = self._peer_bits
        if cached is not None and cached[0] is peers:
            bits = cached[1]
        else:
            bits = 0
            for peer in peers:
                bit = 1 << (peer + 1)
                if bits & bit:
                    bits = -1
                    break
                bits |= bit
            self._peer_bits = (peers, bits)
        drawn = self._used.get(stream, 0)
        if bits < 0 or drawn & bits:
            for peer in peers:
                self._claim(peer, stream)  # raises MaskReuseError at the first drawn before
        self._used[stream] = drawn | bits

    def private(self, call: Call, n: int, sub: int = 0) -> np.ndarray:
        stream = stream_number(call, sub)
        self._claim(-1, stream)
        return self.ciphers.field_stream(self._private_key, stream, n, self.field)

    def expand(self, seed: Seed, call: Call, n: int) -> np.ndarray:
        """:func:`expand_stream`: AES-256-CTR keyed by ``seed``, stream ``call.index``."""
        return expand_stream(seed, call, n, self.field, self.ciphers)

    def pairwise(self, peer: int, call: Call, n: int, sub: int = 0) -> np.ndarray:
        seed = self._pair_seeds.get(peer)
        if seed is None:
            raise MpcsimError(
                f"no mask seed shared with party {peer}: key agreement has not run with it"
            )
        stream = stream_number(call, sub)
        self._claim(peer, stream)
        return self.ciphers.field_stream(seed, stream, n, self.field)

    def pairwise_many(
        self, peers: tuple[int, ...], call: Call, n: int, sub: int = 0
    ) -> np.ndarray:
        stream = stream_number(call, sub)
        return self.ciphers.field_streams(self._claim_seeds(peers, stream), stream, n,
                                          self.field)

    def pairwise_mask(
        self, peers: tuple[int, ...], call: Call, half: int, sub: int = 0
    ) -> np.ndarray:
        stream = stream_number(call, sub)
        seeds = self._claim_seeds(peers, stream)
        signs = [1 if self.party < peer else -1 for peer in peers]
        return mask_sums.pair_mask_sum(seeds, signs, stream, half, self.field, ciphers=self.ciphers)

    def pairwise_signed_sum(
        self, peers: tuple[int, ...], call: Call, n: int, sub: int = 0
    ) -> np.ndarray:
        """:func:`one_stream_mask_from_streams` of the n-element streams, fused
        (:func:`protocols.crypto.mask_sums.signed_stream_sum`)."""
        stream = stream_number(call, sub)
        seeds = self._claim_seeds(peers, stream)
        signs = [1 if self.party < peer else -1 for peer in peers]
        return mask_sums.signed_stream_sum(seeds, signs, stream, n, self.field,
                                           ciphers=self.ciphers)

    def add_pairwise_signed_sum(
        self, base: np.ndarray, peers: tuple[int, ...], call: Call, sub: int = 0
    ) -> np.ndarray:
        """``base`` + :meth:`pairwise_signed_sum` (mod p), in one pass where it can
        (:meth:`protocols.crypto.mask_sums.add_signed_stream_sum`)."""
        stream = stream_number(call, sub)
        signed = self._signed_keys(peers)
        self._claim_all(peers, stream)
        return mask_sums.add_signed_keys_sum(base, signed, stream, self.field, ciphers=self.ciphers)

    def _signed_keys(self, peers: tuple[int, ...]) -> SignedKeys:
        """The pair seeds shared with ``peers``, signed as the one-stream mask signs them
        (+ where this party is the lower one): built once for a party's peers and kept until
        a seed is installed again or the peers or the party differ."""
        known = self._signed
        if known is not None and known[0] == self.party and known[1] == peers:
            return known[2]
        seeds = [self._seed(peer) for peer in peers]
        signed = SignedKeys(seeds, [1 if self.party < peer else -1 for peer in peers])
        self._signed = (self.party, tuple(peers), signed)
        return signed

    def _claim_seeds(self, peers: tuple[int, ...], stream: int) -> list[bytes]:
        seeds = []
        for peer in peers:
            seed = self._seed(peer)
            self._claim(peer, stream)
            seeds.append(seed)
        return seeds

    def _seed(self, peer: int) -> bytes:
        """The mask seed shared with ``peer``."""
        seed = self._pair_seeds.get(peer)
        if seed is None:
            raise MpcsimError(
                f"no mask seed shared with party {peer}: key agreement has not run with it"
            )
        return seed


class PartyContext:
    """Everything a party program may use.

    Built by the simulation for one party, and shared with no other: every attribute is
    either immutable or this party's own object (see the module docstring).

    Parameters
    ----------
    party : int
        This party's id. Data-holding parties have ids 0..M−1; other roles follow.
    role : str
        ``"site"`` for data holders; ``"aggregator"``, ``"dealer"``, ... for other roles.
    parties : tuple of int
        Ids of the M data-holding parties.
    roles : mapping of int to str
        Role of every participant (data holders and others); the context keeps a read-only
        copy.
    fixed : FixedPoint
        Field and fixed-point precision (this party's own objects).
    randomness : Randomness
        This party's source of field-element masks.
    rng : numpy.random.Generator, optional
        This party's generator for local random choices (never shared).
    rng_seed : bytes
        Seed of the generator when ``rng`` is not given: it is built on first use
        (:func:`party_rng`), so programs that never draw locally do not pay for it.
    key_seed : bytes
        32 bytes from which this party's X25519 key pair is derived.
    """

    def __init__(
        self,
        *,
        party: int,
        role: str,
        parties: tuple[int, ...],
        roles: Mapping[int, str],
        fixed: FixedPoint,
        randomness: Randomness,
        rng: np.random.Generator | None = None,
        rng_seed: bytes = b"",
        key_seed: bytes = b"",
    ) -> None:
        self.party = party
        self.role = role
        self.parties = tuple(parties)
        self.roles: Mapping[int, str] = MappingProxyType(dict(roles))
        self.fixed = fixed
        self.randomness = randomness
        self._rng = rng
        self._rng_seed = rng_seed
        self.key_seed = key_seed
        self.channel_keys: dict[int, bytes] = {}
        self.mask_seeds: dict[int, bytes] = {}
        self.phase = ""
        self._calls = 0
        self._newest: Call | None = None  # the last call new_call made
        self._setup_call: Call | None = None  # the setup's last call, once it is over
        self._peers: tuple[int, tuple[int, ...], tuple[int, ...]] | None = None

    def __repr__(self) -> str:
        return f"PartyContext(party={self.party}, role={self.role!r})"

    @property
    def rng(self) -> np.random.Generator:
        """This party's generator for local random choices (never shared)."""
        if self._rng is None:
            if not self._rng_seed:
                raise MpcsimError(f"party {self.party}'s context has no generator and no seed")
            self._rng = party_rng(self._rng_seed)
        return self._rng

    @property
    def field(self) -> PrimeField:
        return self.fixed.field

    @property
    def n_parties(self) -> int:
        """M, the number of data-holding parties."""
        return len(self.parties)

    @property
    def peers(self) -> tuple[int, ...]:
        """The other data-holding parties (worked out again when ``party`` or ``parties``
        changes)."""
        known = self._peers
        if known is None or known[0] != self.party or known[1] is not self.parties:
            peers = tuple(p for p in self.parties if p != self.party)
            self._peers = known = (self.party, self.parties, peers)
        return known[2]

    def new_call(self, protocol: str) -> Call:
        """Start a protocol invocation: advances the call counter (identically everywhere)."""
        call = Call(protocol, self._calls)
        self._calls += 1
        self._newest = call
        return call

    def end_setup(self) -> None:
        """The driver's setup (key agreement) is over: a failure before the program's first
        call is no longer the setup's (:meth:`failing_call`). The call counter runs on, so
        a run's ledger and views stay byte-identical to earlier versions."""
        self._setup_call = self._newest

    def failing_call(self, last: Call | None) -> Call | None:
        """The call a failure belongs to, given the last call the driver saw an effect of:
        None (before the program's first call) when that was the finished setup's."""
        return None if last is not None and last is self._setup_call else last

    @contextmanager
    def in_phase(self, label: str) -> Iterator[None]:
        """Label the messages sent inside the block with an algorithm phase (e.g. ``init``)."""
        previous = self.phase
        self.phase = label if not previous else f"{previous}/{label}"
        try:
            yield
        finally:
            self.phase = previous

    def install_pair_keys(self, peer: int, channel_key: bytes, mask_seed: bytes) -> None:
        """Record the keys agreed with ``peer``: a channel key and a shared mask seed."""
        self.channel_keys[peer] = channel_key
        self.mask_seeds[peer] = mask_seed
        set_seed = getattr(self.randomness, "set_pair_seed", None)
        if set_seed is not None:
            set_seed(peer, mask_seed)

    def install_all_pair_keys(
        self, channel_keys: Mapping[int, bytes], mask_seeds: Mapping[int, bytes]
    ) -> None:
        """:meth:`install_pair_keys` for every peer at once (a pre-shared set-up gives a party
        all its keys together): peer → channel key, peer → mask seed, the same peers in both.
        The same records, without a call per peer (a million of them at M = 1,000)."""
        if channel_keys.keys() != mask_seeds.keys():
            raise MpcsimError("every peer needs both a channel key and a mask seed")
        self.channel_keys.update(channel_keys)
        self.mask_seeds.update(mask_seeds)
        set_seeds = getattr(self.randomness, "set_pair_seeds", None)
        if set_seeds is not None:
            set_seeds(mask_seeds)
            return
        set_seed = getattr(self.randomness, "set_pair_seed", None)
        if set_seed is not None:
            for peer, seed in mask_seeds.items():
                set_seed(peer, seed)


def party_rng(seed: bytes) -> np.random.Generator:
    """A party's numpy generator, seeded with its own seed bytes (big-endian integer).

    ``rng.bit_generator.seed_seq.entropy`` is then that integer: the party's own value.
    """
    return seeds.generator(seed)
