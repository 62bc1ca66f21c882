"""A public coin: one party draws a seed and sends it to every other party (a declaration).

DSANLS (Qian et al., seed 004, Algorithm 2, line 2: "Broadcast the random seed") starts with
the nodes agreeing on a public seed from which every sketch of the run is regenerated
(:func:`algorithms.nmf.dsanls.sketches.shared_seed`, calls named ``sketch_seed``). Its ideal
functionality is the coin-toss functionality: it hands every party the same uniformly drawn
seed and takes no input. The seed is public by design — every party declares it as the call's
output — so the simulator is trivial: every message of step ``seed`` is the declared output,
one element, and a message between two members is what the sender sent. The protocol is
secure against honest-but-curious parties (the root draws honestly); a seed that is a
function of the root's data is outside this model (the ideal seed is independent of every
input), and the simulation method, which is given the output, cannot see it — what it does
catch is a ``seed`` message that carries more than the seed (the size check: one element) or
anything other than the declared seed (the element comparison).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from protocols.functionality import CallInstance, FunctionalityMismatch, Ideal
from protocols.simulator import CallView, MessageKey, SimulatorMismatch

SKETCH_SEED = "sketch_seed"
"""The call name (and output label) of DSANLS's seed agreement."""

STEP = "seed"
"""The step name of the root's message to every other party."""


def _root(parties: tuple[int, ...], senders: set[int]) -> int:
    if len(senders) > 1:
        raise FunctionalityMismatch(f"{len(senders)} parties {sorted(senders)} sent a "
                                    f"'{STEP}': a public coin has one root")
    return next(iter(senders)) if senders else parties[0]


@dataclass(frozen=True)
class PublicCoin:
    """The coin-toss functionality of calls named ``name``: every party's output ``label`` is
    the same seed, the root's (the party that sent the ``seed`` messages)."""

    label: str = SKETCH_SEED

    def __call__(self, inst: CallInstance) -> dict[str, Ideal]:
        senders = {p for (_, step), who in inst.senders.items() if step == STEP for p in who}
        root = _root(inst.parties, senders)
        mine = [v for lab, v in inst.outputs.get(root, ()) if lab == self.label]
        if len(mine) != 1:
            raise FunctionalityMismatch(f"the root, party {root}, declared {len(mine)} outputs "
                                        f"{self.label!r} of {inst.where}, not one")
        return {self.label: Ideal(np.asarray(mine[0]))}


@dataclass(frozen=True)
class PublicCoinSimulator:
    """Every ``seed`` message a member receives is the declared seed (one int64 element)."""

    variant: str | None = None
    label: str = SKETCH_SEED
    name: str = SKETCH_SEED
    uniform_on_hull: bool = False

    def determined(self, view: CallView) -> bool:
        """No honest input to determine: the call takes none."""
        return False

    def _receivers(self, view: CallView) -> list[tuple[int, int]]:
        root = _root(view.parties, set(view.senders.get(STEP, ())))
        return [(m, root) for m in view.members if m != root]

    def sizes(self, view: CallView) -> dict[MessageKey, int]:
        """Every ``seed`` message is one element: the seed."""
        return {(m, root, STEP): 1 for m, root in self._receivers(view)}

    def simulate(
        self, view: CallView, rng: np.random.Generator, n: int
    ) -> dict[MessageKey, np.ndarray]:
        """``n`` copies of every ``seed`` message: the output, or what a member root sent."""
        out: dict[MessageKey, np.ndarray] = {}
        seed = np.ravel(np.asarray(view.output(self.label), dtype=np.int64))
        if seed.size != 1:
            raise SimulatorMismatch(f"the declared {self.label!r} has {seed.size} elements, "
                                    "not one seed")
        for m, root in self._receivers(view):
            value = seed if root not in view.members else np.ravel(view.sent_by(root, m, STEP))
            out[(m, root, STEP)] = np.broadcast_to(value, (n, value.size))
        return out
