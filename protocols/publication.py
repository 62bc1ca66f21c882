"""Publication: calls whose every message carries a value its sender publishes (a declaration).

Some exchanges of the papers' algorithms are not secure computations but releases: in DP
robust NMF (seed 002's Fig. 1, :mod:`algorithms.nmf.dp_robust`) the first curator forwards the
SecureSum of the curators' Gaussian-noised statistics — the differentially private release — to
the analyst, and the analyst sends back W_t, a post-processing of the releases. What such a
message reveals is the published value, by design; what must be checked is that the message
carries *that* value and nothing more.

A program declares each published value as an output of the call, at the sender and at every
receiver, under the label ``published.<step>`` (:func:`label`). The ideal functionality
(:class:`Publication`) gives every party that declares it the sender's value; the simulator
(:class:`PublicationSimulator`) reproduces each message a member receives as its declared
value, and declares its size (so a message with more elements is a ``leak`` of property
``size``, and one with other values differs from its simulation). The judgement is relative to
the declaration: that the published value itself is safe to publish (DP post-processing of a
noised sum) is the mechanism's claim, for which the DP accounting stands, not the audit's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from protocols.functionality import CallInstance, FunctionalityMismatch, Ideal
from protocols.simulator import CallView, MessageKey, SimulatorMismatch

PREFIX = "published."


def label(step: str) -> str:
    """The output label under which a call's published ``step`` value is declared."""
    return PREFIX + step


@dataclass(frozen=True)
class Publication:
    """Every declared ``published.<step>`` output is the value the step's sender declared."""

    def __call__(self, inst: CallInstance) -> dict[str, Ideal]:
        steps = {lab[len(PREFIX):] for recs in inst.outputs.values() for lab, _ in recs
                 if lab.startswith(PREFIX)}
        out = {}
        for step in sorted(steps):
            senders = {s for (_, st), who in inst.senders.items() if st == step for s in who}
            if len(senders) != 1:
                raise FunctionalityMismatch(f"step {step!r} of {inst.where} has senders "
                                            f"{sorted(senders)}: a publication has one")
            sender = senders.pop()
            mine = [v for lab, v in inst.outputs.get(sender, ()) if lab == label(step)]
            if len(mine) != 1:
                raise FunctionalityMismatch(f"party {sender} sends {step!r} in {inst.where} "
                                            f"but declares {len(mine)} {label(step)!r} outputs")
            out[label(step)] = Ideal(np.asarray(mine[0]))
        return out


@dataclass(frozen=True)
class PublicationSimulator:
    """Each message a member receives is the value it declares as published in the step."""

    name: str
    variant: str | None = None
    uniform_on_hull: bool = False

    def determined(self, view: CallView) -> bool:
        """Nothing honest is hidden: every message is a declared output."""
        return False

    def _declared(self, view: CallView) -> dict[MessageKey, np.ndarray]:
        out = {}
        for step, senders in view.senders.items():
            for m in view.members:
                values = [v for lab, v in view.outputs.get(m, ()) if lab == label(step)]
                for s in senders:
                    if s == m:
                        continue
                    if s in view.members:
                        try:
                            out[(m, s, step)] = np.ravel(view.sent_by(s, m, step))
                        except SimulatorMismatch:
                            continue  # the member sent it to others, not to m
                    elif values:
                        out[(m, s, step)] = np.ravel(np.asarray(values[0]))
        return out

    def sizes(self, view: CallView) -> dict[MessageKey, int]:
        """Every message has the size of the value the receiver declares published."""
        return {k: int(v.size) for k, v in self._declared(view).items()}

    def simulate(
        self, view: CallView, rng: np.random.Generator, n: int
    ) -> dict[MessageKey, np.ndarray]:
        """``n`` copies of every message a member receives: its declared published value."""
        return {k: np.broadcast_to(v, (n, v.size)) for k, v in self._declared(view).items()}
