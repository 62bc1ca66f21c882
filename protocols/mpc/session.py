"""The MPC engine's session: input sharing, openings and local (linear) operations.

A secret v ∈ F_p is held as shares v_j, one per data holder, with Σ_j v_j ≡ v (mod p)
(spec ``normed_secure_sum.md`` §2.1); the share arithmetic is :mod:`protocols.sharing`'s.
Linear operations are local: [a] + [b], c·[a] for a public c, and adding a public constant
(only the first data holder adds it). Opening
(:meth:`Session.open`) costs one round: every party sends its share to every other party and
adds what it receives. Openings that do not depend on each other are batched by the caller into
one call (one round).

Every opening declares what it is:

* ``beaver`` — a value masked by a fresh uniform field element (Beaver and square-pair
  differences): uniform on F_p, nothing to check;
* ``masked`` — a value v of declared signed bit length K plus 2^(K−1) plus a dealer mask
  uniform on [0, 2^(K+κ)) (TruncPr, BitDec): it must lie in [0, 2^(K+κ) + 2^K), and an opening
  outside that range raises :class:`~protocols.errors.FieldOverflowError` naming the bound;
* ``output`` — a declared output, checked against its signed bound.

What the simulator draws for each kind (:mod:`protocols.mpc.simulator`): ``beaver`` uniform,
``masked`` the masked law with the secret set to 0 (within 2^−κ), ``output`` the declared
output; the honest shares complete the drawn value. ``input`` shares an honest party sends
are its fresh masks: uniform and independent.

The step name of the opening, ``"<n>.<kind>.<label>"`` (n counts the call's openings), is the
message tag the ledger records, so a report or an audit can tell the openings apart.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from protocols.context import PartyContext
from protocols.effects import Call, RecvEach, SendEach
from protocols.field import PrimeField
from protocols.field.mersenne127 import Mersenne127Field, concatenate
from protocols.mpc.coins import call_rng
from protocols.mpc.dealer import Pool
from protocols.mpc.public import check_range, constant
from protocols.sharing import column_sum, own_share

BEAVER, MASKED, OUTPUT, INPUT = "beaver", "masked", "output", "input"


@dataclass
class Session:
    """One party's state in one invocation of an MPC protocol.

    Attributes
    ----------
    ctx : PartyContext
        The party's context (id, peers, generator).
    field : PrimeField
        The engine's field (:func:`protocols.field.mersenne127.mpc_field`).
    call : Call
        The invocation; its tag names every message.
    pool : Pool
        This party's dealer material for the invocation.
    kappa : int
        Statistical security parameter of masked openings.
    """

    ctx: PartyContext
    field: PrimeField
    call: Call
    pool: Pool
    kappa: int
    openings: int = 0
    opened_elements: dict[str, int] = field(default_factory=dict)
    _constants: dict[int, np.ndarray] = field(default_factory=dict, repr=False)

    @property
    def leader(self) -> bool:
        """Whether this party adds public constants (the first data holder)."""
        return self.ctx.party == self.ctx.parties[0]

    def const(self, value: int) -> np.ndarray:
        """The public integer ``value`` as a 0-d element (cached per session)."""
        cached = self._constants.get(value)
        if cached is None:
            cached = self._constants[value] = constant(self.field, value)
        return cached

    def add_public(self, shares: np.ndarray, public: np.ndarray) -> np.ndarray:
        """Shares of v + c for a public c (elements, broadcastable): only the leader adds."""
        return self.field.add(shares, public) if self.leader else np.array(
            np.broadcast_to(shares, np.broadcast_shapes(np.shape(shares), np.shape(public))))

    def scale(self, shares: np.ndarray, c: int) -> np.ndarray:
        """Shares of c·v for a public integer c."""
        return self.field.mul(shares, self.const(c))

    def open(
        self,
        shares: np.ndarray,
        kind: str,
        label: str,
        bound: int | None = None,
    ) -> Generator[Any, Any, np.ndarray]:
        """Open ``shares`` (any shape) in one round; range-check against ``bound``.

        For ``masked`` openings ``bound`` is the exclusive upper bound of the unsigned value;
        for ``output`` openings the bound of |value| in the signed view.
        """
        self.openings += 1
        step = f"{self.openings:02d}.{kind}.{label}"
        shares = np.ascontiguousarray(shares)
        peers = self.ctx.peers
        if peers:
            yield SendEach(dict.fromkeys(peers, shares.reshape(-1)), self.call, step)
            received = yield RecvEach(peers, self.call, step)
            flat = shares.reshape(-1)
            for p in peers:
                flat = self.field.add(flat, received[p])
        else:
            flat = shares.reshape(-1)
        opened = flat.reshape(shares.shape)
        self.opened_elements[kind] = self.opened_elements.get(kind, 0) + shares.size
        if bound is not None:
            check_range(self.field, opened, bound, f"{kind} value '{label}'",
                        signed_view=(kind == OUTPUT))
        return opened


def concat(field: PrimeField, arrays: list[np.ndarray]) -> np.ndarray:
    """Flat concatenation of element arrays (a fast path for GF(2^127 − 1) records)."""
    if isinstance(field, Mersenne127Field):
        return concatenate(arrays)
    return np.concatenate([np.asarray(a).reshape(-1) for a in arrays])


def share_input(
    ctx: PartyContext, field: PrimeField, call: Call, values: np.ndarray
) -> Generator[Any, Any, np.ndarray]:
    """P0 Share: every party shares its element array; returns shares of the sum, one round.

    Party m draws M − 1 uniform elements for each coordinate as the others' shares (from its
    private stream of the call, :mod:`protocols.mpc.coins`) and keeps its value minus their
    sum; it sends d(M − 1) elements. The returned array holds this party's share of
    Σ_m values_m.
    """
    peers = ctx.peers
    if not peers:
        return values
    masks = field.random(call_rng(ctx, call), (len(peers), *values.shape))
    own = own_share(field, values, list(masks))
    step = f"00.{INPUT}.share"
    yield SendEach({p: masks[i] for i, p in enumerate(peers)}, call, step)
    received = yield RecvEach(peers, call, step)
    return column_sum(field, own, [received[p] for p in peers])
