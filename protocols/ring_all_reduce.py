"""Ring All-Reduce: reduce-scatter then all-gather around a ring of the parties.

Patarasuk & Yuan, "Bandwidth optimal all-reduce algorithms for clusters of workstations"
(J. Parallel Distrib. Comput. 69(2), 2009), the algorithm behind MPI's and NCCL's large-message
All-Reduce, which seed 004's cluster (Qian et al., §5) runs. The N parties sit on a ring in
party order (position i sends to i + 1 and receives from i − 1, mod N); the flat array of
length L is cut into N chunks (``numpy.array_split``: the first L mod N chunks one longer).

* reduce-scatter, steps s = 0..N−2 (``reduce<s>``): position i sends its running sum of chunk
  (i − s) mod N and adds what it receives to chunk (i − s − 1) mod N. After N − 1 steps
  position i holds the whole sum of chunk (i + 1) mod N;
* all-gather, steps s = 0..N−2 (``gather<s>``): position i forwards chunk (i + 1 − s) mod N
  and stores the chunk (i − s) mod N it receives.

Each chunk's sum is formed once, in ring order starting at the chunk's own position, and then
copied, so every party obtains bitwise the same array (within N·ε·Σ|x| of numpy's sum in any
order). Per party and call: 2(N − 1) rounds and messages and 2(N − 1) chunks ≈ 2(N − 1)L/N
elements sent (:func:`ring_cost`), against the plain All-Reduce's (N − 1)L — the bandwidth
MPI's ring saves on a cluster where a node's sends share one link (the ``star`` topology).

Like the plain All-Reduce it is a speed-up primitive in the clear: in step ``reduce0`` a
party receives its predecessor's own chunk, and later steps carry partial sums of
consecutive parties. Its declaration (:mod:`protocols.registry`) has the plain All-Reduce's
functionality (the sum) and :class:`RingAllReduceSimulator`: with one honest party the sum
determines its input and the simulator recomputes every message; with two or more it says
why no simulator exists and the audit answers "leak".
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from protocols.context import PartyContext
from protocols.effects import Input, Output, Recv, Send
from protocols.errors import InputError
from protocols.secure_sum import Cost
from protocols.simulator import (
    CallView,
    MessageKey,
    SimulatorMismatch,
    members_input_length,
    uniform_with_sum,
)

PROTOCOL = "ring_all_reduce"

Add = Callable[[np.ndarray, np.ndarray], np.ndarray]


def chunk_bounds(length: int, n_parties: int) -> list[tuple[int, int]]:
    """The N half-open chunks of a flat array of ``length`` (``numpy.array_split``'s cut)."""
    q, extra = divmod(length, n_parties)
    stops = np.cumsum([q + (1 if c < extra else 0) for c in range(n_parties)])
    return [(int(b - (q + (1 if c < extra else 0))), int(b)) for c, b in enumerate(stops)]


def steps(n_parties: int) -> list[tuple[str, Callable[[int], int], Callable[[int], int]]]:
    """Every step in order: (name, chunk position i sends, chunk position i receives)."""
    n = n_parties
    out: list[tuple[str, Callable[[int], int], Callable[[int], int]]] = []
    for s in range(n - 1):
        out.append((f"reduce{s}", lambda i, s=s: (i - s) % n, lambda i, s=s: (i - s - 1) % n))
    for s in range(n - 1):
        out.append((f"gather{s}", lambda i, s=s: (i + 1 - s) % n, lambda i, s=s: (i - s) % n))
    return out


def ring_cost(n_parties: int, length: int, position: int = 0) -> Cost:
    """Rounds, messages and elements the party at ``position`` sends in one call on ``length``.

    It sends every chunk but (i + 1) mod N in the reduce-scatter and every chunk but
    (i + 2) mod N in the all-gather: 2L − |C_{i+1}| − |C_{i+2}| elements.
    """
    if n_parties < 2:
        return Cost(rounds=0, messages_sent=0, elements_sent=0)
    sizes = [b - a for a, b in chunk_bounds(length, n_parties)]
    sent = 2 * length - sizes[(position + 1) % n_parties] - sizes[(position + 2) % n_parties]
    return Cost(rounds=2 * (n_parties - 1), messages_sent=2 * (n_parties - 1),
                elements_sent=sent)


def ring_messages(values: Sequence[np.ndarray], add: Add) -> tuple[
        dict[tuple[int, str], np.ndarray], np.ndarray]:
    """Every message of the ring on the flat inputs of positions 0..N−1, and the sum.

    Returns ``{(sender position, step): payload}`` and the reduced array, computed exactly as
    the party program computes them (the same chunks, the same order of additions).
    """
    n = len(values)
    bounds = chunk_bounds(int(np.size(values[0])), n)
    acc = [[np.array(v[a:b], copy=True) for a, b in bounds] for v in values]
    sent: dict[tuple[int, str], np.ndarray] = {}
    for name, out_chunk, in_chunk in steps(n):
        payloads = [acc[i][out_chunk(i)] for i in range(n)]
        for i in range(n):
            sent[(i, name)] = payloads[i]
        for i in range(n):
            got = payloads[(i - 1) % n]
            c = in_chunk(i)
            acc[i][c] = add(acc[i][c], got) if name.startswith("reduce") else got
    return sent, np.concatenate(acc[0]) if n else np.zeros(0)


def ring_sum(
    ctx: PartyContext, values: np.ndarray, label: str, add: Add,
) -> Generator[Any, Any, np.ndarray]:
    """Party program: Σ_m x_m (flat) by reduce-scatter and all-gather around the ring.

    ``add`` adds two chunks: float addition for reals, the field's for field elements. The
    call records ``values`` as its input and the sum as its declared output ``sum``.
    """
    call = ctx.new_call(PROTOCOL)
    yield Input(label, values, call)
    flat = np.ravel(values)
    parties = tuple(ctx.parties)
    n, i = len(parties), parties.index(ctx.party)
    bounds = chunk_bounds(flat.size, n)
    acc = [np.array(flat[a:b], copy=True) for a, b in bounds]
    after, before = parties[(i + 1) % n], parties[(i - 1) % n]
    for name, out_chunk, in_chunk in steps(n):
        yield Send(after, acc[out_chunk(i)], call, name)
        got = yield Recv(before, call, name)
        c = in_chunk(i)
        if np.size(got) != acc[c].size:
            raise InputError(
                f"ring all-reduce '{label}': party {before} sent {np.size(got)} numbers of "
                f"chunk {c} in {name}, party {ctx.party} expected {acc[c].size}; every party "
                "must pass the same shape")
        acc[c] = add(acc[c], np.asarray(got)) if name.startswith("reduce") else np.asarray(got)
    total = np.concatenate(acc) if acc else flat.copy()
    yield Output("sum", total, call)
    return total


def float_add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Chunk addition on reals (float64)."""
    return np.add(a, b)


# -- the simulator (protocols.simulator) ---------------------------------------------------------


@dataclass(frozen=True)
class RingAllReduceSimulator:
    """The ring All-Reduce's simulator: what its declared output, the sum, allows.

    A member at position i receives one message per step from position i − 1. With one honest
    party h the sum and the coalition's inputs determine x_h = S − Σ_{m∈C} x_m
    (:func:`protocols.all_reduce.honest_inputs`), and every message of the ring is a function
    of all inputs: :meth:`simulate` recomputes them (:func:`ring_messages`). With two or more
    honest parties the member after an honest party receives that party's own chunk in step
    ``reduce0``, which the sum leaves undetermined: :meth:`reveals` says so. :meth:`simulate`
    then draws the honest inputs uniformly subject to their sum (field inputs), the law a
    private All-Reduce would give them, and recomputes the ring on those.
    """

    variant: str | None = None
    name: str = PROTOCOL
    uniform_on_hull: bool = True

    def determined(self, view: CallView) -> bool:
        """With one honest party, its input is the sum minus the coalition's inputs."""
        return len(view.honest) <= 1

    def sizes(self, view: CallView) -> dict[MessageKey, int]:
        """Each step's chunk, as the members' input length cuts it."""
        parties = tuple(view.parties)
        n = len(parties)
        sizes = [b - a for a, b in chunk_bounds(members_input_length(view), n)]
        out: dict[MessageKey, int] = {}
        for m in view.members:
            i = parties.index(m)
            for name, out_chunk, _ in steps(n):
                out[(m, parties[(i - 1) % n], name)] = sizes[out_chunk((i - 1) % n)]
        return out

    def reveals(self, view: CallView) -> str | None:
        """Why the call's messages cannot be simulated from the sum, or None."""
        if self.determined(view):
            return None
        return (f"the ring All-Reduce passes each party's own chunk to its successor in the "
                f"clear (step reduce0) and partial sums of consecutive parties after it; the "
                f"declared output, the sum, leaves the {len(view.honest)} honest inputs "
                "undetermined, so a simulator would have to be given them (use "
                "allreduce = \"secure_sum\")")

    def simulate(
        self, view: CallView, rng: np.random.Generator, n: int
    ) -> dict[MessageKey, np.ndarray]:
        """``n`` draws of every message the coalition receives: key → (n, size)."""
        if not view.honest:
            raise SimulatorMismatch("a coalition of every party has nothing to simulate")
        parties = tuple(view.parties)
        mine = {m: np.ravel(view.input(m)) for m in view.members}
        total = np.ravel(view.output("sum"))
        floating = np.issubdtype(total.dtype, np.floating)
        if view.honest_inputs:
            draws = [{h: np.ravel(view.honest_inputs[h]) for h in view.honest}] * n
        elif floating:
            if not self.determined(view):
                raise SimulatorMismatch("the sum of real numbers leaves two or more honest "
                                        "inputs without a law to draw them from")
            rest = total - np.sum(list(mine.values()), axis=0)
            draws = [{view.honest[0]: rest}] * n
        else:
            field = view.field
            known = field.zeros((len(view.honest), total.size))
            left = field.sub(total, field.sum_arrays(list(mine.values())))
            rest = uniform_with_sum(field, rng, n, known, left)
            draws = [{h: rest[j, k] for k, h in enumerate(view.honest)} for j in range(n)]
        add: Add = float_add if floating else view.field.add
        keys = self.sizes(view)
        out: dict[MessageKey, list[np.ndarray]] = {key: [] for key in keys}
        cache: dict[int, dict[tuple[int, str], np.ndarray]] = {}
        for draw in draws:
            key_id = id(draw)
            if key_id not in cache:
                inputs = [mine[p] if p in mine else draw[p] for p in parties]
                cache[key_id] = ring_messages(inputs, add)[0]
            sent = cache[key_id]
            for key in keys:
                _, sender, step = key
                out[key].append(sent[(parties.index(sender), step)])
        return {key: np.stack(v) for key, v in out.items()}
