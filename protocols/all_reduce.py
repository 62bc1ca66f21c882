"""All-Reduce: every party obtains the sum (or the average) of the parties' arrays.

The distributed algorithms of Qian et al. (seed 004) communicate only through MPI's
All-Reduce: DSANLS (Algorithm 2, lines 7 and 13) sums the parties' sketched factors; Syn-SD and
Syn-SSD (Algorithms 4 and 5) average the local copies U_(r) and their sketches S_2U_(r). The
paper claims these protocols are (N−1)-private; what they reveal is the reduced value, so the
reduced value is the call's **declared output** (digest §7.4 item 66): after the reduction
every party records ``Output(output, value)``, and an audit asks whether a coalition learns
anything beyond it. With N = 2 the declared average alone gives a party the other's input
(2·average − own input); that is a property of the output, not of how it was computed.

Two ways to compute it:

``secure_sum``
    :func:`protocols.secure_sum.secure_sum` (PRG or explicit shares) on the fixed-point
    encoding: a coalition sees uniformly random column sums consistent with the total, and
    nothing of an individual honest input. The result is exact in the field, so every party
    gets the identical array, within N·2^−(f+1) of the real sum.
``plain``
    What MPI's All-Reduce does on a trusted cluster: every party sends its float64 array to
    every peer and adds the arrays in party order (so all parties obtain bitwise the same
    sum). Every peer sees every individual input: the comparison point for the audit.
``ring``
    MPI's large-message All-Reduce in the clear: reduce-scatter and all-gather around the
    ring of parties (:mod:`protocols.ring_all_reduce`, calls named ``ring_all_reduce``),
    2(N − 1) steps of L/N-sized chunks. Every party obtains bitwise the same sum; a party
    sees its predecessor's own chunk and partial sums, so it is no more private than
    ``plain``.

Declared cost per party per call on d numbers: ``plain`` — 1 round, N − 1 messages, (N − 1)d
elements sent (float64), the same counts as SecureSum's ``prg`` variant (field elements);
``explicit`` SecureSum doubles them (:func:`protocols.secure_sum.declared_cost`); ``ring`` —
2(N − 1) rounds and messages, ≈ 2(N − 1)d/N elements (:func:`protocols.ring_all_reduce.
ring_cost`, exact for the party at position 0).
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

import numpy as np

from protocols.context import PartyContext
from protocols.effects import Input, Output, RecvEach, SendEach
from protocols.errors import InputError
from protocols.functionality import CallInstance, FunctionalityMismatch, Ideal, field_sum
from protocols.ring_all_reduce import float_add, ring_cost, ring_sum
from protocols.secure_sum import Cost, check_variant, declared_cost, secure_sum, secure_sum_field
from protocols.simulator import (
    CallView,
    MessageKey,
    SimulatorMismatch,
    members_input_length,
    uniform_with_sum,
)

METHODS: tuple[str, ...] = ("secure_sum", "plain", "ring")
PROTOCOL = "all_reduce"


def check_method(method: str) -> str:
    """``method`` if it is one of :data:`METHODS`, else an InputError naming them."""
    if method not in METHODS:
        raise InputError(f"all-reduce method {method!r} is unknown; use one of {METHODS}")
    return method


def all_reduce_cost(method: str, variant: str, n_parties: int, length: int) -> Cost:
    """Rounds, messages and elements each party sends in one All-Reduce of ``length`` numbers."""
    check_method(method)
    if method == "secure_sum":
        return declared_cost(variant, n_parties, length)
    if method == "ring":
        return ring_cost(n_parties, length)
    m1 = n_parties - 1
    return Cost(rounds=1, messages_sent=m1, elements_sent=m1 * length)


def all_reduce(
    ctx: PartyContext,
    x: Any,
    *,
    method: str = "secure_sum",
    variant: str = "prg",
    average: bool = False,
    output: str = "sum",
) -> Generator[Any, Any, np.ndarray]:
    """Party program: the sum (``average=True``: the mean) of the parties' arrays.

    Parameters
    ----------
    ctx : PartyContext
        The party's context; all data-holding parties take part.
    x : array_like of any shape
        This party's array; every party passes the same shape.
    method : {"secure_sum", "plain", "ring"}
        How the sum is computed (module docstring).
    variant : {"prg", "explicit"}
        The SecureSum variant (``method = "secure_sum"`` only).
    average : bool
        Divide the sum by N.
    output : str
        Label of the declared output recorded in the party's view.

    Returns
    -------
    ndarray of x's shape
        The same array at every party.
    """
    check_method(method)
    check_variant(variant)
    values = np.asarray(x, dtype=np.float64)
    if method == "secure_sum":
        total = yield from secure_sum(ctx, values, variant, label=output)  # type: ignore[arg-type]
    elif method == "ring":
        total = (yield from ring_sum(ctx, values, output, float_add)).reshape(values.shape)
    else:
        total = yield from _plain_sum(ctx, values, output)
    result = total / ctx.n_parties if average else total
    yield Output(output, np.array(result, copy=True))
    return result


def _plain_sum(ctx: PartyContext, values: np.ndarray, label: str) -> Generator[Any, Any, Any]:
    call = ctx.new_call(PROTOCOL)
    yield Input(label, values, call)
    peers = ctx.peers
    yield SendEach(dict.fromkeys(peers, values.ravel()), call, "value")
    received = yield RecvEach(peers, call, "value")
    for peer in peers:
        if np.size(received[peer]) != values.size:
            raise InputError(
                f"all-reduce '{label}': party {peer} sent {np.size(received[peer])} numbers, "
                f"party {ctx.party} has {values.size}; every party must pass the same shape"
            )
    total = np.zeros(values.size)
    for party in ctx.parties:  # party order: every party adds in the same order
        total = total + (values.ravel() if party == ctx.party else received[party])
    yield Output("sum", total, call)  # the call's declared output, as SecureSum declares it
    return total.reshape(values.shape)


def all_reduce_field(
    ctx: PartyContext, x_hat: np.ndarray, method: str = "secure_sum", variant: str = "prg"
) -> Generator[Any, Any, np.ndarray]:
    """Party program on field elements: Σ_m x̂^(m) at every party, securely or in the clear.

    The form audits run (:mod:`parties.audit` compares a coalition's views of it for input sets
    with the same sum); ``plain`` sends the flat vector x̂ itself to every peer.
    """
    check_method(method)
    if method == "secure_sum":
        return (yield from secure_sum_field(ctx, x_hat, variant))  # type: ignore[arg-type]
    x_hat = np.asarray(x_hat)
    if method == "ring":
        return (yield from ring_sum(ctx, x_hat, "x", ctx.field.add))
    call = ctx.new_call(PROTOCOL)
    yield Input("x", x_hat, call)
    yield SendEach(dict.fromkeys(ctx.peers, x_hat), call, "value")
    received = yield RecvEach(ctx.peers, call, "value")
    total = ctx.field.sum_arrays([x_hat if p == ctx.party else received[p] for p in ctx.parties])
    yield Output("sum", total, call)
    return total


# -- the simulator (protocols.simulator) ---------------------------------------------------------


@dataclass(frozen=True)
class AllReduceSimulator:
    """The plain All-Reduce's simulator: what its declared output, the sum, allows.

    The ``secure_sum`` method's calls are SecureSum calls, simulated by
    :class:`protocols.secure_sum.SecureSumSimulator`; this one is for the calls named
    ``all_reduce``, the clear method. There every honest party h sends its input x_h to every
    member (step ``value``). From the declared output S and its own inputs a coalition knows
    Σ_{h∈H} x_h and nothing else:

    * one honest party — S determines x_h (:meth:`determined`), and the simulator reproduces
      its message as S − Σ_{m∈C} x_m;
    * two or more — no simulator given only the coalition's inputs and S can produce the x_h;
      :meth:`reveals` says so and the audit answers "leak" at the call. :meth:`simulate` then
      draws what the sum alone would show on field inputs (the x_h uniform subject to their
      sum), the law a private All-Reduce would have.
    """

    variant: str | None = None
    name: str = PROTOCOL
    uniform_on_hull: bool = True

    def determined(self, view: CallView) -> bool:
        """With one honest party, its input is the sum minus the coalition's inputs."""
        return len(view.honest) <= 1

    def sizes(self, view: CallView) -> dict[MessageKey, int]:
        """Every ``value`` message is one party's input: d elements, as the members' own."""
        d = members_input_length(view)
        return {(m, p, "value"): d for m in view.members for p in view.parties if p != m}

    def reveals(self, view: CallView) -> str | None:
        """Why the call's messages cannot be simulated from the sum, or None."""
        if self.determined(view):
            return None
        return (f"the plain All-Reduce sends each honest party's input in the clear to every "
                f"peer; the declared output, the sum, leaves the {len(view.honest)} honest "
                "inputs undetermined, so a simulator would have to be given them (use "
                "allreduce = \"secure_sum\")")

    def simulate(
        self, view: CallView, rng: np.random.Generator, n: int
    ) -> dict[MessageKey, np.ndarray]:
        """``n`` draws of every ``value`` message the coalition receives: key → (n, d)."""
        if not view.honest:
            raise SimulatorMismatch("a coalition of every party has nothing to simulate")
        mine = [np.ravel(view.input(m)) for m in view.members]
        total = np.ravel(view.output("sum"))
        out: dict[MessageKey, np.ndarray] = {}
        for m in view.members:
            for other in view.members:
                if other != m:
                    sent = np.ravel(view.sent_by(other, m, "value"))
                    out[(m, other, "value")] = np.broadcast_to(sent, (n, sent.size))
        if view.honest_inputs:  # determined: the honest inputs themselves (S − Σ_C x_m)
            rest = np.stack([np.ravel(view.honest_inputs[h]) for h in view.honest])[None]
        elif np.issubdtype(total.dtype, np.floating):
            if not self.determined(view):
                raise SimulatorMismatch("the sum of real numbers leaves two or more honest "
                                        "inputs without a law to draw them from")
            rest = (total - np.sum(mine, axis=0))[None, None, :]
        else:
            field = view.field
            known = field.zeros((len(view.honest), total.size))
            rest = uniform_with_sum(field, rng, n, known, field.sub(total, field.sum_arrays(mine)))
        for m in view.members:
            for k, h in enumerate(view.honest):
                out[(m, h, "value")] = np.broadcast_to(rest[:, k, :], (n, total.size))
        return out


# -- the ideal functionality (protocols.functionality) -------------------------------------------


def functionality(inst: CallInstance) -> dict[str, Ideal]:
    """The plain All-Reduce's ideal output: ``sum`` = Σ_m x_m.

    Over GF(p) exactly; on reals, the sum in party order (as every party adds), with a
    tolerance of M·ε·Σ_m |x_m| per element for any other order of the additions.
    """
    who = inst.contributors
    values = [np.ravel(inst.input_of(p)) for p in who]
    if not values or not all(np.issubdtype(v.dtype, np.floating) for v in values):
        return {"sum": Ideal(field_sum(inst))}
    if len({v.size for v in values}) != 1:
        raise FunctionalityMismatch(f"the inputs to {inst.where} have different lengths")
    total = np.zeros(values[0].size)
    for v in values:
        total = total + v
    tol = len(values) * float(np.finfo(np.float64).eps) * float(
        np.max(np.sum(np.abs(values), axis=0), initial=0.0))
    return {"sum": Ideal(total, tol)}


def honest_inputs(view: CallView) -> dict[int, np.ndarray] | None:
    """With one honest party h, its input x_h = S − Σ_{m∈C} x_m (None with two or more)."""
    if len(view.honest) != 1:
        return None
    mine = [np.ravel(view.input(m)) for m in view.members]
    total = np.ravel(view.output("sum"))
    if np.issubdtype(total.dtype, np.floating):
        rest = total - np.sum(mine, axis=0)
    else:
        rest = view.field.sub(total, view.field.sum_arrays(mine))
    return {view.honest[0]: rest}
