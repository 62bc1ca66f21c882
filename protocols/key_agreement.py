"""Key agreement: the one-time setup that gives every pair of parties its keys.

Each party derives an X25519 key pair from its key seed, sends its 32-byte public key to every
other participant in the clear (public keys are public; the messages are unsealed and carry
zero field elements), and derives, with each peer, a channel key for AES-GCM sealing and a
mask seed for the pair's PRG streams (X25519 + HKDF-SHA256, :mod:`protocols.channels`).

SecureSum's PRG variant (thesis seed 001, §2.2: "Party i, j simply have to coordinate a random
seed for their corresponding PRNGs") relies on these mask seeds. The setup runs once per
simulation, before the programs; its messages are in the ledger under the protocol name
``key_agreement``, so a report can show them apart from the protocols they serve.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np

from protocols.channels import agree, keypair
from protocols.context import PartyContext
from protocols.effects import RecvEach, SendEach

PROTOCOL = "key_agreement"


def key_agreement(ctx: PartyContext) -> Generator[Any, Any, None]:
    """Party program: agree on a channel key and a mask seed with every other participant."""
    others = tuple(sorted(p for p in ctx.roles if p != ctx.party))
    if not others:
        return
    call = ctx.new_call(PROTOCOL)
    private, public = keypair(ctx.key_seed)
    public_arr = np.frombuffer(public, dtype=np.uint8)
    yield SendEach(dict.fromkeys(others, public_arr), call, "public_key", sealed=False)
    received = yield RecvEach(others, call, "public_key")
    for peer in others:
        keys = agree(private, bytes(received[peer]), ctx.party, peer)
        ctx.install_pair_keys(peer, keys.channel_key, keys.mask_seed)
