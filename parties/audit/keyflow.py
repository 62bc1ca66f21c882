"""Key flow: honest key material that reaches the coalition, and what the coalition derives from it.

A mask hides an input only from parties that cannot recompute it. The audit controls every
party's randomness (:class:`~.randomness.ConditionedRandomness`), so it knows the bytes of every
key — each party's private mask key ``("private", m)`` and each pair's seed ``("pair", a, b)``
(the seed key agreement would give the pair; an audited program finds it in
``ctx.mask_seeds``) — and, from the recorded draws, every mask stream expanded from them
(AES-256-CTR, :mod:`protocols.crypto.keystream`). Element by element such material is uniform, so
tests on values alone (the statistical and simulation methods) see nothing when a site hands its
pair seed or its mask key to a third party; yet that party now knows every mask derived from it.

:func:`trace` runs the program once and looks in the coalition's view (received payloads and
declared outputs) for every honest key, or a function of one the audit can recompute:

* the key's bytes, as they are, as one field element per byte, or as 64-bit words (mod p);
* the first keystream block (16 bytes) of each AES stream drawn from it, which gives the
  first elements of that stream;
* each pair stream drawn from a pair seed, and each party's net pairwise mask in a call (the
  signed sum of its pair streams, SecureSum's one-stream mask) — not a private stream as it
  is: a share drawn from a private key and sent to a peer is how share-based protocols work,
  and their simulators account for it;
* with a second run on other honest inputs and fresh honest keys (:func:`trace` with
  ``alternative``), any of these **plus**, or **XOR**, a constant: a payload P with
  P − D (or P ⊕ D) the same in both runs depends on neither the honest inputs nor the honest
  randomness, so the coalition can compute it and recover D.

* each honest party's **draws** (field elements from its private streams), whole or any run
  of consecutive elements (:func:`find_draws`): a share addressed to its receiver, a nonce —
  or a short seed the program expands itself and hands to the wrong party. They are held
  fixed at their positions; holding a draw accounts for everything the program computes from
  it, so draws alone never turn ``private`` into ``inconclusive`` (details ``draws_held``),
  and the simulation method, whose simulators draw shares afresh, checks them separately
  (:func:`derived_from_draws`).

A match counts only when chance cannot explain it: the matched material carries at least
:data:`~parties.audit.key_search.MIN_BITS` bits (in a tiny field a single mask element
matches by accident; the exact method enumerates those cases instead). The search itself is
:mod:`parties.audit.key_search`.

What the coalition learns is then *added to its knowledge*: a key found in the view is held
fixed across the audit's trials like the coalition's own keys, a stream or the prefix a
keystream block gives is held fixed element by element
(:meth:`~.randomness.ConditionedRandomness.knowing`, applied by :class:`KnownKeysRunner`).
A message that carries key material and nothing else (verbatim, or offset by a constant the
coalition knows) tells the coalition nothing once it is credited with that material, and is
left out of the comparison. The method then tests the coalition's residual view as usual, so
a ``leak`` is the real consequence: the masks it now knows expose an honest input. When the
residual view shows nothing, the value-testing methods unmask (:mod:`.unmasking`): they
recompute every stream the coalition derives from what it holds — SecAgg hashes a drawn seed
into an X25519 key, and the masks it agrees with honest peers change with their fresh keys,
though the coalition recomputes them — and answer ``leak`` when an honest message minus those
streams is affine in an honest input. Where nothing unmasks, only the exact method — which
enumerates every key value through the program's own AES expansion — answers ``private``
(e.g. one direction of a pair whose other direction still hides the input); the value-testing
methods answer ``inconclusive``. Key bytes split over several records are found word by word
(:func:`~parties.audit.key_search.find_pieces`); a record that is the coalition's *own* key
material is no flow, and is left out of the comparison (:func:`own_material`). Either way the
details name each key and the message that carried it (``key_flow``). The linear method models
views affine in field elements; key bytes are not, so with key flow it answers ``not
applicable`` and names them.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from parties.audit.key_search import (
    Carrier,
    Derivation,
    Finding,
    carriers,
    catalogue,
    find,
    find_draws,
    find_offsets,
)
from parties.audit.randomness import (
    ConditionedRandomness,
    KeyId,
    KnownElements,
    RandomnessFactory,
    Runner,
    key_owners,
)
from parties.audit.result import INCONCLUSIVE, LEAK, NOT_APPLICABLE, PRIVATE, AuditResult
from parties.audit.unmasking import judged, message_name
from parties.party import Party
from parties.view import AbortedRun, View
from protocols import seeds
from protocols.field import PrimeField

TRACE_TRIAL = (1 << 31) - 2
"""Trial number of the traced run (the audits' own trials count up from 0)."""



@dataclass(frozen=True)
class KeyFlow:
    """What :func:`trace` found: the findings and the knowledge they add."""

    findings: tuple[Finding, ...] = ()
    notes: tuple[str, ...] = ()
    known_keys: frozenset[KeyId] = field(default_factory=frozenset)
    known_streams: Mapping[tuple[KeyId, int], int] = field(default_factory=dict)
    spent: frozenset[tuple[int, str]] = field(default_factory=frozenset)
    """(receiver, message) of the messages that carry key material and nothing else."""
    known_elements: KnownElements = field(default_factory=dict)
    """Honest draw elements, by position, the coalition holds (:func:`find_draws`)."""
    own_spent: frozenset[tuple[int, str]] = field(default_factory=frozenset)
    """(receiver, message) of the messages that carry the coalition's *own* key material
    and nothing else (a pair seed sent to its other holder): constants it knows, left out of
    the comparison like :attr:`spent`, and no key flow."""

    def __bool__(self) -> bool:
        return bool(self.findings)

    @property
    def beyond_draws(self) -> bool:
        """Whether the coalition holds key material beyond honest draws: key bytes, or a
        stream the audit recomputes from a key. Holding draws alone keeps tests on values
        complete — whatever a program computes from a draw is a function of the held
        elements, fixed with them — while a key may feed derivations the audit does not
        track (see :func:`annotate`)."""
        return any(not f.draw for f in self.findings)

    @classmethod
    def of(cls, findings: Sequence[Finding], notes: Sequence[str] = ()) -> KeyFlow:
        keys: set[KeyId] = set()
        streams: dict[tuple[KeyId, int], int] = {}
        unique: dict[tuple[KeyId, str, str], Finding] = {}
        for f in findings:
            unique.setdefault((f.key, f.what, f.where), f)
            for key, stream, n in f.reveals:
                if stream is None:
                    keys.add(key)
                else:
                    streams[(key, stream)] = max(n, streams.get((key, stream), 0))
        positions: dict[tuple[KeyId, int], frozenset[int]] = {}
        for f in findings:
            for key, stream, at in f.elements:
                positions[(key, stream)] = positions.get((key, stream), frozenset()) | set(at)
        # A message that is an honest draw stays in the view: the pattern and the simulators
        # account for it (a share addressed to its receiver), and held fixed it is a constant.
        spent = frozenset((f.receiver, f.where) for f in findings if f.whole and not f.draw)
        return cls(tuple(unique.values()), tuple(notes), frozenset(keys), streams, spent,
                   positions)

    def without_draws(self) -> KeyFlow:
        """The flow with its draw findings left out (keys and streams only)."""
        return dataclasses.replace(KeyFlow.of([f for f in self.findings if not f.draw],
                                              self.notes), own_spent=self.own_spent)

    @property
    def drops(self) -> bool:
        """Whether the audited runs must hold keys fixed or leave messages out."""
        return bool(self.findings) or bool(self.own_spent)

    def describe(self) -> list[dict[str, Any]]:
        return [f.describe() for f in self.findings]


# -- one traced run, and the audits that use it --------------------------------------------------


def trace(
    runner: Runner,
    parties: Sequence[Party],
    coalition: Sequence[int],
    seed: int,
    alternative: Sequence[Party] | None = None,
) -> KeyFlow:
    """Run ``parties`` once under the audit's randomness and find honest key material in the
    coalition's view; with ``alternative`` (the same program on other honest inputs), also
    material carried plus or XOR a constant the coalition knows."""
    members = sorted(int(m) for m in coalition)
    ids = sorted(p.id for p in parties)

    drawn: list[Finding] = []

    def one(parties_: Sequence[Party], trial: int) -> tuple[list[Carrier], list[Derivation]]:
        randomness = ConditionedRandomness(ids, members, seed, trial)
        keys = randomness.keys()
        honest = {k for k in keys if not key_owners(k) & set(members)}
        views = runner(parties_, randomness)
        found_in = carriers(views, members)
        if not drawn:
            drawn.extend(find_draws(found_in, views, runner.field, honest))
        return found_in, catalogue(keys, views, runner.field, honest)

    first = one(parties, TRACE_TRIAL)
    findings = find(*first)
    own = own_material(runner, parties, members, seed)
    notes: list[str] = []
    if alternative is not None:
        second = one(alternative, TRACE_TRIAL + 1)
        more, notes = find_offsets([first, second], runner.field)
        verbatim = {(f.key, f.where) for f in findings}
        findings += [f for f in more if (f.key, f.where) not in verbatim]
    return dataclasses.replace(KeyFlow.of(findings + drawn, notes), own_spent=own)


def own_material(runner: Runner, parties: Sequence[Party], members: Sequence[int],
                 seed: int) -> frozenset[tuple[int, str]]:
    """(receiver, message) of every record of the coalition's view that is its own key
    material and nothing else: a key a member holds, or a stream expanded from one, sent back
    to it (a pair seed handed to its other holder). The coalition knew it; a simulator that
    draws the message afresh would call the constant a leak."""
    ids = sorted(p.id for p in parties)
    randomness = ConditionedRandomness(ids, members, seed, TRACE_TRIAL)
    keys = randomness.keys()
    own = {k for k in keys if key_owners(k) & set(members)}
    views = runner(parties, randomness)
    # one key's material only: a net mask mixes in the honest partners' streams
    single = [d for d in catalogue(keys, views, runner.field, own)
              if not d.what.startswith("net pairwise mask")]
    found = find(carriers(views, members), single)
    return frozenset((f.receiver, f.where) for f in found if f.whole)


def other_inputs(field_: PrimeField, inputs: Sequence[Any], coalition: Sequence[int],
                 seed: int) -> list[np.ndarray] | None:
    """The inputs with every honest party's vector redrawn uniformly (for the offset search),
    or None when the inputs are not flat vectors of field elements."""
    out = []
    rng = seeds.rng(seed, "audit.keyflow")
    for m, x in enumerate(inputs):
        arr = np.asarray(x)
        if arr.ndim != 1 or arr.dtype.kind not in "uiO" or arr.size == 0 or any(
                not 0 <= int(v) < field_.p for v in arr.tolist()):
            return None
        out.append(arr if m in set(coalition) else field_.random(rng, arr.size))
    return out


def traced_parties(method: Callable[..., AuditResult]) -> Callable[..., AuditResult]:
    """Key flow for a method on the parties of a run: ``method(runner, parties, coalition,
    *, seed, ...)`` (the simulation method) runs with what the coalition learns held fixed,
    and its verdict names the keys. ``key_flow=`` passes a flow traced already (with the
    offset search, when the caller has the program and other inputs)."""

    @functools.wraps(method)
    def audited(runner: Runner, parties: Sequence[Party], coalition: Sequence[int],
                *args: Any, seed: int = 0, key_flow: KeyFlow | None = None,
                **kwargs: Any) -> AuditResult:
        flow = key_flow if key_flow is not None else trace(runner, parties, coalition, seed)
        keys_only = flow.without_draws()
        known = KnownKeysRunner(runner, keys_only) if keys_only.drops else runner
        result = method(known, parties, coalition, *args, seed=seed, **kwargs)
        if result.verdict == PRIVATE and len(keys_only.findings) < len(flow.findings):
            derived = derived_from_draws(runner, parties, coalition, seed, flow)
            if derived is not None:
                return annotate(derived, flow)
        return annotate(_unmasked(result, runner, parties, coalition, seed, flow), flow)

    return audited


DERIVED_TRIALS = 4
"""Trials of :func:`derived_from_draws` with the draws held."""

MAX_DRAW_ELEMENTS = 64
"""Most held draw elements :func:`derived_from_draws` fits an affine map to."""


def derived_from_draws(runner: Runner, parties: Sequence[Party], coalition: Sequence[int],
                       seed: int, flow: KeyFlow) -> AuditResult | None:
    """The simulation method's answer when the coalition recomputes messages from honest
    draws it received beyond affine maps, else None.

    A simulator models a received draw as what it is in the declared protocol — a share, a
    pad — and draws it afresh; it cannot be conditioned on the coalition *holding* the draw.
    The simulation method therefore runs without the draws held, which judges every use of
    them the comparison sees — affine relations between a received draw and later messages
    (an explicit share and the column sums) included. What it cannot see is a draw used as a
    seed: the masks a drawn seed expands to (AES) are uniform element by element and bear no
    affine relation to the seed. So this checks, for each message from an honest party that
    is the same in every trial with the draws held (the coalition computes it from what it
    holds), whether it is an affine function (over GF(p)) of the draw elements the coalition
    received, fitted over trials without the draws held. When it is not, the program uses the
    draw beyond what the simulators model, and the method answers ``not applicable`` naming
    the draw and the message (the statistical method decides it). A share addressed to its
    receiver, or a broadcast nonce, determines nothing non-affinely.
    """
    members = sorted(int(m) for m in coalition)
    ids = sorted(p.id for p in parties)
    draws = sorted({(f.receiver, f.where) for f in flow.findings if f.draw})
    field_ = runner.field

    def payloads(held: bool, trials: int) -> list[dict[tuple[int, str], list[int]]]:
        out = []
        for t in range(trials):
            randomness = ConditionedRandomness(ids, members, seed, t)
            randomness = randomness.knowing(
                flow.known_keys, flow.known_streams, flow.known_elements if held else {})
            views = runner(parties, randomness)
            out.append({(m, message_name(msg, m)): [int(v) for v in
                                                    np.ravel(np.asarray(msg.payload)).tolist()]
                        for m in members for msg in views[m].received
                        if msg.sender not in set(members)})
        return out

    held = payloads(True, DERIVED_TRIALS)
    candidates = [w for w in held[0] if w not in set(draws)
                  and all(run.get(w) == held[0][w] for run in held)]
    if not candidates:
        return None
    k = sum(len(held[0].get(w, ())) for w in draws)
    free = payloads(False, min(k, MAX_DRAW_ELEMENTS) + 1 + DERIVED_TRIALS)
    if any(w not in run for run in free for w in (*draws, *candidates)):
        return None  # the pattern changes with the honest randomness: the comparison says so
    basis = np.array([[*(v for w in draws for v in run[w]), 1] for run in free], dtype=object)
    rank = field_.rank(field_.elements(basis)) if k <= MAX_DRAW_ELEMENTS else None
    for where in candidates:
        for i in range(len(held[0][where])):
            column = np.array([[run[where][i]] for run in free], dtype=object)
            if rank is not None and field_.rank(field_.elements(
                    np.concatenate([basis, column], axis=1))) == rank:
                continue  # affine in the received draws: the comparison judged it
            return AuditResult(tuple(members), "simulation", NOT_APPLICABLE, message=where[1],
                               details={
                "reason": f"honest draws reach the coalition (draws_held), and with them held "
                          f"{where[1]} is the same in every trial but not an affine function "
                          "of them: the coalition computes it from them as from a seed or a "
                          "key, a use of the draws the simulators do not model; use method = "
                          "'statistical'",
                "derived_message": where[1],
                "draws_held": [f.describe() for f in flow.findings if f.draw]})
    return None


def _unmasked(result: AuditResult, runner: Runner, parties: Sequence[Party],
              coalition: Sequence[int], seed: int, flow: KeyFlow) -> AuditResult:
    """``result``, or ``leak`` when a held key unmasks an honest input
    (:func:`.unmasking.judged`)."""
    if not flow.beyond_draws or result.verdict == LEAK:
        return result
    return judged(result, runner, parties, coalition, seed, flow)


def traced_inputs(method: Callable[..., AuditResult]) -> Callable[..., AuditResult]:
    """Key flow for a method on a program and its field inputs: ``method(runner,
    make_parties, inputs, coalition, *, seed, ...)`` (the statistical and exact methods);
    with the offset search on other honest inputs."""

    @functools.wraps(method)
    def audited(runner: Runner, make_parties: Callable[[Sequence[Any]], list[Party]],
                inputs: Sequence[Any], coalition: Sequence[int], *args: Any, seed: int = 0,
                **kwargs: Any) -> AuditResult:
        other = other_inputs(runner.field, inputs, coalition, seed)
        if other is None:  # the method answers "not applicable" on these inputs
            return method(runner, make_parties, inputs, coalition, *args, seed=seed, **kwargs)
        values = [np.asarray(x) for x in inputs]
        flow = trace(runner, make_parties(values), coalition, seed, make_parties(other))
        known = KnownKeysRunner(runner, flow) if flow.drops else runner
        result = method(known, make_parties, inputs, coalition, *args, seed=seed, **kwargs)
        return annotate(_unmasked(result, runner, make_parties(values), coalition, seed, flow),
                        flow)

    return audited


@dataclass(frozen=True)
class KnownKeysRunner:
    """A :class:`~.randomness.Runner` whose conditioned trials hold the flow's keys fixed too.

    In those trials a message that carries key material and nothing else is left out of the
    coalition's views: it is a constant the coalition is now credited with (a message that is
    an honest draw stays: the pattern and the simulators account for it, and held it is a
    constant). Any other randomness (the exact method's enumerated keys) runs as it is, every
    message kept."""

    inner: Runner
    flow: KeyFlow

    @property
    def field(self) -> PrimeField:
        return self.inner.field

    def __call__(self, parties: Sequence[Party], randomness: RandomnessFactory
                 ) -> Mapping[int, View]:
        if not isinstance(randomness, ConditionedRandomness):
            return self.inner(parties, randomness)  # the exact method's own keys: as they are
        randomness = randomness.knowing(self.flow.known_keys, self.flow.known_streams,
                                        self.flow.known_elements)
        views = self.inner(parties, randomness)
        spent = self.flow.spent | self.flow.own_spent
        receivers = {m for m, _ in spent}
        if not receivers:
            return views
        out = dict(views)
        for m in receivers & set(views):
            kept = [msg for msg in views[m].received
                    if (m, message_name(msg, m)) not in spent]
            out[m] = dataclasses.replace(views[m], received=kept)
        if isinstance(views, AbortedRun):  # an abort is an observation: keep it, and where
            return AbortedRun(out, views.party, views.call, views.reason, views.refused)
        return out


def annotate(result: AuditResult, flow: KeyFlow) -> AuditResult:
    """``result`` with the key flow named in its details (and what it led to): keys and
    streams under ``key_flow``, honest draws the coalition holds under ``draws_held`` (a
    share reaching its addressee is one; it is named, not alarming)."""
    if not flow:
        return result
    details = dict(result.details)
    if flow.beyond_draws:
        details["key_flow"] = [f.describe() for f in flow.findings if not f.draw]
    if len(flow.findings) > len(flow.without_draws().findings):
        details["draws_held"] = [f.describe() for f in flow.findings if f.draw]
    if flow.notes:
        details["key_flow_notes"] = list(flow.notes)
    if result.verdict == LEAK:
        details["key_flow_consequence"] = (
            "with the honest key material above as its own randomness, the coalition's view "
            "depends on the honest inputs")
    elif result.verdict == PRIVATE and result.method == "exact":
        details["key_flow_consequence"] = (
            "the coalition holds the honest key material above, and with it its view still "
            "reveals nothing beyond its inputs and outputs (every key value enumerated)")
    elif result.verdict == PRIVATE and not flow.beyond_draws:
        details["key_flow_consequence"] = (
            "honest draws above reach the coalition; held fixed as its own randomness (and "
            "with them everything the program computes from them), its residual view shows "
            "no dependence on the honest inputs")
    elif result.verdict == PRIVATE:
        details["key_flow_consequence"] = (
            "the coalition holds the honest key material above; held fixed as its own "
            "randomness, its residual view shows no dependence on the honest inputs, and no "
            "honest message is unmasked by the streams the audit recomputes from it (draws, "
            "seed expansions, key agreements); but a program may derive secrets from a key in "
            "ways the audit does not recompute, so this method cannot answer private; the "
            "exact method decides it in a tiny field")
        return dataclasses.replace(result, verdict=INCONCLUSIVE, details=details)
    return dataclasses.replace(result, details=details)


def not_applicable_linear(members: Sequence[int], flow: KeyFlow) -> AuditResult:
    """The linear method's answer when key material reaches the coalition."""
    return AuditResult(tuple(members), "linear", NOT_APPLICABLE, details={
        "reason": "honest key material reaches the coalition (key_flow); key bytes and AES "
                  "expansions are not affine in field elements, so the linear model cannot "
                  "judge what the coalition derives from them; use the statistical or "
                  "simulation method",
        "key_flow": flow.describe()})
