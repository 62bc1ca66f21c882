"""The trusted dealer: preprocessing material, dealt in an offline phase before inputs exist.

The dealer (role ``"dealer"``, the id after the sites) runs before the data holders have
inputs and hands each of them additive shares of input-independent correlated randomness
(spec ``normed_secure_sum.md`` §2.1, §2.7):

========== ================================= ================= =========================
kind       what is shared                     elements/party    used by
========== ================================= ================= =========================
triple     (a, b, ab), a, b uniform in F_p    3 per item        Beaver products (P1)
square     (a, a²), a uniform                 2 per item        squares (P2)
bit        b uniform in {0, 1}                1 per item        BitDec (P4)
mask       h uniform on [0, 2^bits)           1 per item        BitDec's high mask (P4)
trunc      (r_lo, r_lo + 2^m·r_hi), r_lo      2 per item        TruncPr (P3), dithered
           uniform on [0, 2^m), r_hi uniform                    output opening (O4)
           on [0, 2^(bits − m))
rowtriple  (a_i, b, a_i·b) for the m items     2 per item, and   products by one value
           of one row: one b per row          1 per row         per row (O1,
                                                                 :func:`~protocols.mpc.multiply.multiply_rows`)
hiprod     ρ_a·ρ_b, the product of the high      1 per item        local products of TruncPr
           masks r_hi of two earlier trunc                      outputs (O2,
           items of the plan (``refs``)                         :mod:`protocols.mpc.masked`)
========== ================================= ================= =========================

A protocol states what it needs as a :data:`Plan` — a sequence of :class:`Request` — computed
from public parameters only. :func:`deal` turns a plan into M flat share vectors (the values of
every item in plan order, each split into M − 1 uniform shares and a last share that completes
the sum); :func:`dealer` is the dealer's party program, which sends party j its vector as one
message per protocol invocation, in the offline phase (``ctx.in_phase("offline")``: the ledger's
``phase`` column marks these rows ``offline``). A data holder wraps its vector in a
:class:`Pool` and takes items in the order of the plan; taking anything the plan does not list
at that point is an error, so the dealer and the parties can never silently disagree.

Randomness: the dealer draws from a generator seeded by its private mask stream of each
invocation (:mod:`protocols.mpc.coins`), so a run replays exactly and an audit that redraws
the dealer's streams redraws its material. Departure from the spec's optional bandwidth saving
(PRG-seeded shares, one correction element per item to P_1, as CrypTen's TTP): the dealer sends
every share explicitly, so the offline cost in the ledger is M × the material per party; the
saving would not change the online phase that the cost formulas and Table 2.2 concern.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any

import numpy as np

from protocols.context import PartyContext
from protocols.effects import Call, Recv, SendEach
from protocols.errors import MpcsimError
from protocols.field import PrimeField
from protocols.field.mersenne127 import ELEMENT127, mpc_field
from protocols.mpc.coins import call_rng
from protocols.mpc.public import constant
from protocols.simulator import CallView, MessageKey, SimulatorMismatch

PROTOCOL = "dealer"



@dataclass(frozen=True)
class MaterialStandIn:
    """The dealer's side in a simulated run: every member's material share, uniform."""

    field: PrimeField
    rng: np.random.Generator

    def reply(self, sender: int, step: str, heard: Mapping[MessageKey, np.ndarray],
              sizes: Mapping[int, int]) -> dict[int, np.ndarray]:
        return {m: self.field.random(self.rng, n) for m, n in sizes.items()}


@dataclass(frozen=True)
class DealerSimulator:
    """Simulator of the dealer's offline messages (program-rerun form, :mod:`protocols.simulator`).

    :func:`deal` splits every item into M − 1 uniform shares and a last one that completes
    it, so the shares of any proper subset of the data holders are uniform and independent of
    the material — and of everything else: the material is drawn before inputs exist. The
    stand-in therefore hands each member a fresh uniform vector of the message's size. A
    coalition of *every* data holder sees the material itself; it has no honest input to
    protect and is outside this simulator (its runs fail the output check). The dealer in the
    coalition *with* a data holder knows every triple and mask: NormedSecureSum's simulator
    declares that it reveals everything
    (:class:`protocols.normed_secure_sum_simulator.NormedSecureSumSimulator`).
    """

    name: str = PROTOCOL
    uniform_on_hull: bool = True

    def stand_in(self, view: CallView, rng: np.random.Generator) -> MaterialStandIn:
        return MaterialStandIn(mpc_field(view.field.p), rng)

    def determined(self, view: CallView) -> bool:
        return False

    def simulate(self, view: CallView, rng: np.random.Generator, n: int
                 ) -> dict[MessageKey, np.ndarray]:
        """Not drawn call by call: the audit re-runs the members' programs (``stand_in``)."""
        raise SimulatorMismatch("the dealer's material is simulated by re-running the "
                                "coalition's programs (DealerSimulator.stand_in)")


SIMULATOR = DealerSimulator()
"""The dealer's simulator (:class:`DealerSimulator`)."""
ROLE = "dealer"
OFFLINE = "offline"
STEP = "material"

WIDTH = {"triple": 3, "square": 2, "bit": 1, "mask": 1, "trunc": 2, "hiprod": 1,
         "rowtriple": 2}
"""Elements per item (a ``rowtriple`` request also holds one b per row of m items)."""


@dataclass(frozen=True)
class Request:
    """``count`` items of one ``kind``; ``bits`` and ``m`` parametrise masks and truncation.

    A ``hiprod`` request names its factors in ``refs = (i, offset_i, j, offset_j)``: item k is
    r_hi[offset_i + k] of the plan's request i times r_hi[offset_j + k] of request j, both
    earlier ``trunc`` requests of the same plan. ``refs`` is the dealer's business (it does not
    take part in the parties' matching of the plan, :meth:`Pool.take`).
    """

    kind: str
    count: int
    bits: int = 0
    m: int = 0
    refs: tuple[int, ...] = dataclass_field(default=(), compare=False)

    def __post_init__(self) -> None:
        if self.kind not in WIDTH:
            raise ValueError(f"unknown dealer item kind {self.kind!r}")
        if self.kind == "rowtriple" and (self.m < 1 or self.count % self.m):
            raise ValueError(f"a rowtriple request needs rows of m ≥ 1 items, got "
                             f"count = {self.count}, m = {self.m}")
        if self.refs and (self.kind != "hiprod" or len(self.refs) != 4):
            raise ValueError("only a hiprod request names refs: (i, offset_i, j, offset_j)")

    @property
    def elements(self) -> int:
        """Field elements each party receives for this request."""
        rows = self.count // self.m if self.kind == "rowtriple" else 0
        return WIDTH[self.kind] * self.count + rows


Plan = tuple[Request, ...]


def plan_elements(plan: Sequence[Request]) -> int:
    """Elements each party receives for a plan (the dealer sends M times this)."""
    return sum(r.elements for r in plan)


def plan_items(plan: Sequence[Request]) -> dict[str, int]:
    """Items per kind (triples, square pairs, bits, masks, truncation pairs) of a plan."""
    out = dict.fromkeys(WIDTH, 0)
    for r in plan:
        out[r.kind] += r.count
    return out


def uniform_below(field: PrimeField, rng: np.random.Generator, n: int, bits: int) -> np.ndarray:
    """n elements holding integers uniform on [0, 2^bits) (bits < bit length of p)."""
    if not 0 <= bits < field.p.bit_length():
        raise ValueError(f"2^{bits} is out of the field's range")
    if bits == 0:
        return field.zeros(n)
    words = rng.bit_generator.random_raw((n, (bits + 63) // 64))
    top = bits - 64 * (words.shape[1] - 1)
    words[:, -1] >>= np.uint64(64 - top)
    if field.dtype == ELEMENT127:
        out = np.zeros(n, dtype=ELEMENT127)
        out["lo"] = words[:, 0]
        if words.shape[1] > 1:
            out["hi"] = words[:, 1]
        return out
    if words.shape[1] == 1 and bits < 64:
        return field.elements(words[:, 0])
    values = [sum(int(w) << (64 * j) for j, w in enumerate(row)) for row in words.tolist()]
    return field.elements(np.array(values, dtype=object))


def material_values(field: PrimeField, rng: np.random.Generator, plan: Sequence[Request]
                    ) -> np.ndarray:
    """The clear values of every item of ``plan``, flat, in plan order (component-major).

    Items of one kind are drawn in one vectorised pass and then cut into the plan's requests.
    """
    totals = plan_items(plan)
    pools: dict[str, list[np.ndarray]] = {}
    if totals["triple"]:
        a, b = field.random(rng, totals["triple"]), field.random(rng, totals["triple"])
        pools["triple"] = [a, b, field.mul(a, b)]
    if totals["square"]:
        a = field.random(rng, totals["square"])
        pools["square"] = [a, field.mul(a, a)]
    if totals["bit"]:
        pools["bit"] = [field.elements(rng.bit_generator.random_raw(totals["bit"])
                                       >> np.uint64(63))]
    used = dict.fromkeys(WIDTH, 0)
    parts = []
    highs: dict[int, np.ndarray] = {}
    for index, r in enumerate(plan):
        n = r.count
        if r.kind == "hiprod":
            if len(r.refs) != 4:
                raise ValueError(f"hiprod request {index} names no factors (refs)")
            i, off_i, j, off_j = r.refs
            if i not in highs or j not in highs:
                raise ValueError(f"hiprod request {index} names {i} and {j}: both must be "
                                 "earlier trunc requests of the plan")
            a, b = highs[i][off_i : off_i + n], highs[j][off_j : off_j + n]
            if len(a) != n or len(b) != n:
                raise ValueError(f"hiprod request {index} reaches past its trunc requests")
            parts.append(field.mul(a, b))
        elif r.kind == "rowtriple":  # a_i uniform, one uniform b per row of m, a_i·b
            a, b = field.random(rng, n), field.random(rng, n // r.m)
            parts += [a, b, field.mul(a, np.repeat(b, r.m))]
        elif r.kind in pools:
            start = used[r.kind]
            parts += [component[start : start + n] for component in pools[r.kind]]
            used[r.kind] = start + n
        elif r.kind == "mask":
            parts.append(uniform_below(field, rng, n, r.bits))
        else:  # trunc: r_lo and r_lo + 2^m·r_hi
            r_lo = uniform_below(field, rng, n, r.m)
            r_hi = highs[index] = uniform_below(field, rng, n, r.bits - r.m)
            parts += [r_lo, field.add(r_lo, field.mul(r_hi, constant(field, 1 << r.m)))]
    if not parts:
        return field.zeros(0)
    return np.concatenate(parts)


def deal(field: PrimeField, rng: np.random.Generator, plan: Sequence[Request], n_parties: int
         ) -> list[np.ndarray]:
    """M share vectors of the plan's material: M − 1 uniform, the last completes the sum."""
    values = material_values(field, rng, plan)
    if n_parties == 1:
        return [values]
    masks = field.random(rng, (n_parties - 1, len(values)))
    last = field.sub(values, field.sum(masks, axis=0))
    return [*masks, last]


def dealer_id(ctx: PartyContext) -> int:
    """The id of the dealer among the participants; an error if the run has none."""
    ids = [p for p, role in ctx.roles.items() if role == ROLE]
    if len(ids) != 1:
        raise MpcsimError(
            f"this protocol needs exactly one participant with role {ROLE!r}, found {len(ids)}; "
            "add the dealer party (see protocols.mpc.dealer)"
        )
    return ids[0]


def dealer(ctx: PartyContext, plans: Sequence[Sequence[Request]]
           ) -> Generator[Any, Any, None]:
    """Party program of the dealer: deal ``plans[j]`` for invocation j, offline.

    Each plan is sent as one message per data holder, tagged ``dealer#j.material``.
    """
    field = mpc_field(ctx.field.p)
    with ctx.in_phase(OFFLINE):
        for j, plan in enumerate(plans):
            if not plan:  # nothing to deal (e.g. a variant that opens its sum)
                continue
            call = Call(PROTOCOL, j)
            shares = deal(field, call_rng(ctx, call), plan, ctx.n_parties)
            yield SendEach(dict(zip(ctx.parties, shares, strict=True)), call, STEP)


def receive_material(ctx: PartyContext, instance: int) -> Generator[Any, Any, np.ndarray]:
    """A data holder's program step: receive its material for invocation ``instance``."""
    return (yield Recv(dealer_id(ctx), Call(PROTOCOL, instance), STEP))


class Pool:
    """One party's material for one invocation, taken in the order of the plan.

    Parameters
    ----------
    field : PrimeField
        The engine's field.
    plan : sequence of Request
        The plan the dealer dealt.
    shares : ndarray
        This party's flat share vector (:func:`deal`).
    """

    def __init__(self, field: PrimeField, plan: Sequence[Request], shares: np.ndarray) -> None:
        if len(shares) != plan_elements(plan):
            raise MpcsimError(
                f"dealer material holds {len(shares)} elements, the plan needs "
                f"{plan_elements(plan)}"
            )
        self.field = field
        self._queue: dict[str, list[tuple[Request, np.ndarray]]] = {k: [] for k in WIDTH}
        offset = 0
        for r in plan:
            block = shares[offset : offset + r.elements]
            if r.kind != "rowtriple":  # a rowtriple block stays flat: a ‖ b ‖ ab
                block = block.reshape(WIDTH[r.kind], r.count)
            self._queue[r.kind].append((r, block))
            offset += r.elements

    def take(self, kind: str, count: int, bits: int = 0, m: int = 0) -> tuple[np.ndarray, ...]:
        """The next request of ``kind``: its components, each of length ``count``."""
        return tuple(self.take_block(kind, count, bits, m))

    def take_block(self, kind: str, count: int, bits: int = 0, m: int = 0) -> np.ndarray:
        """The next request of ``kind`` as one (components, count) block (contiguous rows); a
        ``rowtriple`` block is flat, a ‖ b ‖ ab (count + count/m + count elements)."""
        queue = self._queue[kind]
        expected = Request(kind, count, bits, m)
        if not queue or queue[0][0] != expected:
            got = queue[0][0] if queue else "nothing"
            raise MpcsimError(f"dealer material out of step: wanted {expected}, next is {got}")
        _, block = queue.pop(0)
        return block

    def left(self) -> int:
        """Requests not taken yet (0 when a protocol consumed exactly its plan)."""
        return sum(len(q) for q in self._queue.values())
