"""All-Gather: every party obtains the concatenation of the parties' blocks, in party order.

The baselines Qian et al. (seed 004, §3.1 and §3.6.1) compare DSANLS with — distributed MU,
HALS and ANLS/BPP — distribute the row-separable subproblem (Eq. 5) by giving every node the
whole fixed factor: node r owns V_{J_r}, and before the U-subproblem the nodes All-Gather
V = [V_{J_1}; …; V_{J_N}] (n×k), which costs O(kn) per node and iteration against DSANLS's
O(kd) (§3.6.1). This is MPI's ``Allgatherv`` on a trusted cluster: every party sends its float64
block to every peer and stacks the blocks in party order, so all parties hold bitwise the same
array. It is a speed-up primitive, not a private one: every peer sees every block, and the
gathered array is the call's declared output.

Declared cost per party per call with a block of b numbers: 1 round, N − 1 messages,
(N − 1)·b elements sent (:func:`all_gather_cost`).

Its declaration (:mod:`protocols.registry`): the ideal functionality gives every party the
stack of all blocks and its partition (``<output>`` and ``<output>.rows``, the row count of each
party's block — MPI's ``recvcounts``, which every node of ``Allgatherv`` knows); the simulator
(:class:`AllGatherSimulator`) reproduces every honest block as its slice of the output. An
audit of a run that uses it is therefore ``private`` *relative to* that functionality, and
reports what the functionality reveals (:meth:`AllGatherSimulator.leakage`: every block).
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

import numpy as np

from protocols.context import PartyContext
from protocols.effects import Input, Output, RecvEach, SendEach
from protocols.errors import InputError
from protocols.functionality import CallInstance, FunctionalityMismatch, Ideal
from protocols.secure_sum import Cost
from protocols.simulator import CallView, MessageKey, SimulatorMismatch

PROTOCOL = "all_gather"
STEP = "block"
ROWS = ".rows"
"""Suffix of the declared output that holds each party's row count (the partition)."""


def all_gather_cost(n_parties: int, block: int) -> Cost:
    """Rounds, messages and elements one party sends in one All-Gather of its ``block`` numbers."""
    return Cost(rounds=1, messages_sent=n_parties - 1, elements_sent=(n_parties - 1) * block)


def all_gather(
    ctx: PartyContext, block: Any, *, output: str = "gathered"
) -> Generator[Any, Any, np.ndarray]:
    """Party program: the parties' blocks stacked along the first axis, in party order.

    Parameters
    ----------
    ctx : PartyContext
        The party's context; all data-holding parties take part.
    block : array_like of shape (b_r, ...)
        This party's block; the trailing dimensions are the same at every party, the number
        of rows b_r may differ.
    output : str
        Label of the declared output recorded in the party's view.

    Returns
    -------
    ndarray of shape (Σ_r b_r, ...)
        The same array at every party.
    """
    values = np.asarray(block, dtype=np.float64)
    if values.ndim < 1:
        raise InputError(f"all-gather '{output}': a block needs at least one axis")
    call = ctx.new_call(PROTOCOL)
    yield Input(output, values, call)
    yield SendEach(dict.fromkeys(ctx.peers, values), call, "block")
    received = yield RecvEach(ctx.peers, call, "block")
    blocks = []
    for party in ctx.parties:
        part = values if party == ctx.party else np.asarray(received[party], dtype=np.float64)
        if part.ndim != values.ndim or part.shape[1:] != values.shape[1:]:
            raise InputError(
                f"all-gather '{output}': party {party} sent a block of shape {part.shape}, "
                f"party {ctx.party} has {values.shape}; the trailing dimensions must agree"
            )
        blocks.append(part)
    gathered = np.concatenate(blocks, axis=0)
    yield Output(output, gathered.copy(), call)
    yield Output(output + ROWS, np.array([len(b) for b in blocks], dtype=np.int64), call)
    return gathered


# -- the declaration: functionality, simulator, honest inputs ---------------------------------


def _label(records: tuple[tuple[str, Any], ...], where: str) -> str:
    labels = [lab for lab, _ in records]
    if len(labels) != 1:
        raise FunctionalityMismatch(f"{where}: {len(labels)} inputs recorded, an All-Gather "
                                    "takes one block")
    return labels[0]


def functionality(inst: CallInstance) -> dict[str, Ideal]:
    """Every party's output: the stack of all blocks in party order, and each block's rows.

    The outputs carry the label the program gave (``output``), the inputs the one block each
    party recorded (or was given by the audit)."""
    who = inst.parties
    declared = {lab for recs in inst.outputs.values() for lab, _ in recs}
    names = sorted(lab for lab in declared if not lab.endswith(ROWS))
    label = names[0] if len(names) == 1 else _label(inst.inputs.get(who[0], ()), inst.where)
    blocks = [np.asarray(inst.input_of(p), dtype=np.float64) for p in who]
    return {label: Ideal(np.concatenate(blocks, axis=0)),
            label + ROWS: Ideal(np.array([len(b) for b in blocks], dtype=np.int64))}


def _output_label(view: CallView) -> str:
    member = view.members[0]
    names = [lab for lab, _ in view.outputs.get(member, ()) if not lab.endswith(ROWS)]
    if len(names) != 1:
        raise SimulatorMismatch(f"party {member} declared {len(names)} gathered outputs of "
                                f"{view.call.tag('').rstrip('.')}, not one")
    return names[0]


def _split(view: CallView) -> tuple[str, list[np.ndarray]]:
    """Each party's block, sliced from the declared output by the declared partition."""
    label = _output_label(view)
    gathered = np.asarray(view.output(label), dtype=np.float64)
    rows = np.ravel(view.output(label + ROWS)).astype(np.int64)
    if rows.size != len(view.parties) or int(rows.sum()) != gathered.shape[0]:
        raise SimulatorMismatch(f"the declared partition {rows.tolist()} does not split the "
                                f"{gathered.shape[0]} gathered rows among "
                                f"{len(view.parties)} parties")
    ends = np.cumsum(rows)
    return label, [gathered[e - r:e] for r, e in zip(rows, ends, strict=True)]


def honest_inputs(view: CallView) -> dict[int, np.ndarray]:
    """Every honest party's block: its slice of the gathered output."""
    _, blocks = _split(view)
    return {h: blocks[view.parties.index(h)] for h in view.honest}


@dataclass(frozen=True)
class AllGatherSimulator:
    """All-Gather's simulator: the messages are the output.

    Every honest party h sends its block to every member; the functionality's output is the
    stack of all blocks with its partition, so the simulator reproduces the message as h's
    slice of the output (:meth:`determined`: always), and a message between two members as
    the sender sent it. Exact, with no randomness: a run whose ``block`` messages carry
    anything but the blocks of the output (more elements, other values) is caught, as is any
    message the protocol does not send.
    """

    variant: str | None = None
    name: str = PROTOCOL
    uniform_on_hull: bool = False

    def determined(self, view: CallView) -> bool:
        """The output holds every block: it determines every honest input."""
        return True

    def sizes(self, view: CallView) -> dict[MessageKey, int]:
        """Each ``block`` message has as many elements as the sender's slice of the output."""
        _, blocks = _split(view)
        return {(m, p, STEP): int(blocks[i].size) for m in view.members
                for i, p in enumerate(view.parties) if p != m}

    def leakage(self, view: CallView) -> str:
        """What the functionality reveals: every party's block (it is not a private one)."""
        label = _output_label(view)
        return (f"every party's block of {label!r} (All-Gather's output is the stack of all "
                "blocks: a speed-up primitive, not a private one)")

    def simulate(
        self, view: CallView, rng: np.random.Generator, n: int
    ) -> dict[MessageKey, np.ndarray]:
        """``n`` copies of every ``block`` message a member receives: key → (n, size)."""
        _, blocks = _split(view)
        given = view.honest_inputs or {h: blocks[view.parties.index(h)] for h in view.honest}
        out: dict[MessageKey, np.ndarray] = {}
        for m in view.members:
            for p in view.parties:
                if p == m:
                    continue
                value = np.ravel(view.sent_by(p, m, STEP) if p in view.members else given[p])
                out[(m, p, STEP)] = np.broadcast_to(value, (n, value.size))
        return out
