"""The MPC engine's local coins, drawn through the party's injected randomness.

Input shares (:func:`protocols.mpc.session.share_input`) and the dealer's material
(:mod:`protocols.mpc.dealer`) need many uniform draws of several kinds (field elements, bits,
integers below 2^b). They come from a numpy generator seeded, once per call, by four elements
of the party's *private* mask stream of that call (:class:`protocols.context.Randomness`), not
from the party's scenario-seeded ``ctx.rng``. So the audits' injected randomness reaches them:
an audit trial that draws an honest party's streams afresh redraws its input shares and the
dealer's triples, while the coalition's own streams (and so its own shares) stay fixed — the
residual view the simulation method compares (:mod:`parties.audit.simulation`). A run still
replays exactly: the streams are derived from the scenario seed.
"""

from __future__ import annotations

import hashlib

import numpy as np

from protocols import seeds
from protocols.context import PartyContext
from protocols.effects import Call

SEED_ELEMENTS = 4
"""Elements of the private stream that seed one call's generator (≥ 4·61 bits of entropy)."""


def call_rng(ctx: PartyContext, call: Call, sub: int = 0) -> np.random.Generator:
    """A generator for the party's local coins in ``call``, seeded by its private stream."""
    words = np.asarray(ctx.randomness.private(call, SEED_ELEMENTS, sub))
    raw = (repr(words.tolist()).encode() if words.dtype == object
           else np.ascontiguousarray(words).tobytes())
    seed = int.from_bytes(hashlib.blake2b(raw, digest_size=32).digest(), "big")
    return seeds.generator(seed)
