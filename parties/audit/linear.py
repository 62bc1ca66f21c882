"""The exact linear audit: a coalition's view as an affine map over GF(p), decided by ranks.

SecureSum and the share-and-add steps built on it send messages that are affine over GF(p) in
the parties' inputs x and the random draws r (thesis seed 001, §2.2, Table 2.1): every element
a coalition receives is ``V = A·x + B·r + c``. For such a program t-privacy is a question of
linear algebra, answered exactly rather than by sampling.

Extraction by probing
---------------------
The randomness is replaced by a tape (:class:`~parties.audit.randomness.TapeRandomness`) that
hands out the values it is told to. A first run with every input and every draw 0 gives c
(and discovers the streams the program draws); one run per variable — one input element or one
drawn element set to 1 — gives the columns of A and B. The map is then *checked* at
``probes`` uniformly random points of GF(p)^n, inputs and draws together: a view element that
differs from c + A·x + B·r at any of them, a message that appears or disappears, or a payload
that is not a field vector makes the audit **not applicable** to every coalition that receives
it (a program that reduces its masks mod 2^8, or sends the parity of an input, is not affine;
it is never called private). Before that, every probe's message pattern (which messages, sizes,
order, times, aborts: :mod:`parties.audit.pattern`) must be the first probe's; a difference is
a ``leak`` naming the message and the property. The probes are shared by every coalition:
auditing all 2^M − 2 coalitions costs one set of runs.

The decision
------------
For coalition C, the draws it knows — its members' private streams and every pair stream with
a member at one end — and its members' inputs are *known*; the honest inputs x_H and the other
draws r_U are not. Write the view's unknown part as A_H·x_H + B_U·r_U. A combination w of view
elements is free of unknown randomness iff wᵀB_U = 0, and then reveals the function wᵀA_H·x_H
of the honest inputs exactly; any other combination is uniform (r_U is uniform and unknown), so
the coalition learns exactly the space F = {wᵀA_H : wᵀB_U = 0} of linear functions of the
honest inputs. Its declared outputs reveal the row space of their own matrix O_H. The coalition
learns nothing beyond its inputs and outputs iff F ⊆ rowspace(O_H) — equivalently (the issue's
words), A_H maps every honest-input change that keeps the outputs fixed into the column space
of B_U. Both are Gaussian eliminations over GF(p) (:meth:`PrimeField.row_reduce`, vectorised
over rows; checked against galois in the tests): one of [B_U | A_H | I] with the columns of
B_U first, whose rows with a zero B_U part span F and carry their w in the I part, and one of
O_H to test membership.

A leak comes with its **witness**: the view coefficients w (message, element, coefficient) and
the identity they satisfy in every run,

    Σ w·V  =  Σ_h f_h·x_h  +  Σ g·x_C  +  Σ k·r_known  +  constant   (mod p),

where f (on the honest inputs, not a combination of the outputs' functionals) is the function
revealed, and g, k, the constant are what the coalition subtracts from what it knows. The tests
recompute both sides on fresh runs with real masks.

Scope and departures
--------------------
* Programs whose outputs depend on draws the coalition does not know are *not applicable* ("the
  same output" is then not a property of the inputs), as in the exact audit.
* Each party's local coins (``ctx.rng``) are the runner's own and identical in every probe:
  the audit treats them as known constants. A program that masked with them instead of
  ``ctx.randomness`` would be reported as leaking (the witness then holds for those coins) —
  the randomness layer is where masks come from (DESIGN.md).
* Affinity is confirmed, not proved: a map that is a polynomial of degree D ≥ 2 in some
  variable passes one random probe with probability at most D/p (Schwartz–Zippel); the
  verdict's ``power`` states the probes.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from parties.audit.calls import message_name
from parties.audit.pattern import RecordingRunner, aborted
from parties.audit.randomness import Progress, Runner, tape_factory
from parties.audit.result import LEAK, NOT_APPLICABLE, PRIVATE, AuditResult
from parties.party import Party
from parties.view import View
from protocols import seeds
from protocols.effects import Call
from protocols.errors import MpcsimError
from protocols.field import PrimeField
from protocols.simulator import StreamKey, stream_owners

METHOD = "linear"

RowKey = tuple[Any, ...]
"""One view element: ("recv", receiver, protocol, call, step, sender, occurrence, element) or
("out", party, protocol, call, label, occurrence, element)."""


class _NotField(Exception):
    """A payload or output that is not a vector of field elements."""


@dataclass(frozen=True)
class Variables:
    """The probed variables: every input element of every site, then every drawn element."""

    input_sizes: tuple[int, ...]
    streams: tuple[tuple[StreamKey, int], ...]

    @property
    def n_inputs(self) -> int:
        return sum(self.input_sizes)

    @property
    def size(self) -> int:
        return self.n_inputs + sum(n for _, n in self.streams)

    def input_slices(self) -> list[slice]:
        bounds = np.cumsum((0, *self.input_sizes)).tolist()
        return [slice(a, b) for a, b in itertools.pairwise(bounds)]

    def stream_slices(self) -> list[tuple[StreamKey, slice]]:
        out, offset = [], self.n_inputs
        for key, n in self.streams:
            out.append((key, slice(offset, offset + n)))
            offset += n
        return out

    def describe(self, column: int) -> tuple[str, Any, int]:
        """("input", party, element) or ("draw", stream key, element) of a variable."""
        for party, sl in enumerate(self.input_slices()):
            if sl.start <= column < sl.stop:
                return "input", party, column - sl.start
        for key, sl in self.stream_slices():
            if sl.start <= column < sl.stop:
                return "draw", key, column - sl.start
        raise IndexError(f"variable {column} is outside the {self.size} probed")

    def known(self, members: Sequence[int]) -> np.ndarray:
        """Boolean mask of the variables the coalition knows (its inputs, its streams)."""
        mask = np.zeros(self.size, dtype=bool)
        member_set = set(members)
        for party, sl in enumerate(self.input_slices()):
            mask[sl] = party in member_set
        for key, sl in self.stream_slices():
            mask[sl] = bool(stream_owners(key) & member_set)
        return mask


@dataclass(frozen=True)
class AffineMap:
    """Every party's view elements as ``c + J·z`` over GF(p), from the probes.

    Attributes
    ----------
    rows : tuple of RowKey
        The view elements (received messages, then declared outputs, of every party).
    owner : ndarray of int, shape (rows,)
        The party whose view holds each element.
    output : ndarray of bool, shape (rows,)
        Whether an element is a declared output.
    constant : ndarray, shape (rows,)
        c: the view at z = 0.
    jacobian : ndarray, shape (rows, variables)
        J: column i is the view at z = e_i minus c.
    affine : ndarray of bool, shape (rows,)
        Whether the element matched c + J·z at every random probe (and kept its place).
    unstable : frozenset of int
        Parties whose messages appear, vanish or change size between probes.
    non_field : frozenset of int
        Parties that received or output something other than field elements.
    variables : Variables
        What z holds.
    probes : int
        Random probes the map was checked at.
    """

    rows: tuple[RowKey, ...]
    owner: np.ndarray
    output: np.ndarray
    constant: np.ndarray
    jacobian: np.ndarray
    affine: np.ndarray
    unstable: frozenset[int]
    non_field: frozenset[int]
    variables: Variables
    probes: int


def _flat(field: PrimeField, value: Any) -> np.ndarray:
    arr = np.ravel(np.asarray(value))
    if arr.dtype.kind not in "uiO":
        raise _NotField
    if arr.dtype.kind == "O" and not all(isinstance(v, int | np.integer) for v in arr):
        raise _NotField
    if arr.size and (int(arr.min()) < 0 or int(arr.max()) >= field.p):
        raise _NotField
    return field.elements(arr)


def _record(
    views: Mapping[int, View], field: PrimeField
) -> tuple[dict[int, tuple[tuple[RowKey, ...], np.ndarray]], set[int]]:
    """Per party: its view elements (keys in a fixed order) and their values."""
    out: dict[int, tuple[tuple[RowKey, ...], np.ndarray]] = {}
    bad: set[int] = set()
    for party in sorted(views):
        view = views[party]
        items: list[tuple[RowKey, np.ndarray]] = []
        try:
            seen: dict[tuple, int] = {}
            for msg in view.received:
                base = (msg.protocol, msg.call, msg.step, msg.sender)
                k = seen.get(base, 0)
                seen[base] = k + 1
                items.append((("recv", party, *base, k), _flat(field, msg.payload)))
            for call, label, value in view.outputs:
                base = (call.protocol if call else "", call.index if call else -1, label)
                k = seen.get(("out", *base), 0)
                seen[("out", *base)] = k + 1
                items.append((("out", party, *base, k), _flat(field, value)))
        except _NotField:
            bad.add(party)
            out[party] = ((), field.zeros(0))
            continue
        items.sort(key=lambda kv: repr(kv[0]))
        keys = tuple((*key, e) for key, values in items for e in range(values.size))
        values = (np.concatenate([v for _, v in items]) if items else field.zeros(0))
        out[party] = (keys, values.astype(field.dtype, copy=False))
    return out, bad


def probe(
    runner: Runner,
    make_parties: Callable[[Sequence[np.ndarray]], list[Party]],
    input_sizes: Sequence[int],
    *,
    probes: int = 3,
    seed: int = 0,
    progress: Progress | None = None,
) -> AffineMap:
    """Extract every party's view as an affine map of the inputs and draws, and check it.

    Parameters
    ----------
    runner : Runner
        Runs parties with injected randomness; its field is the audit's.
    make_parties : callable
        ``make_parties(inputs)``: the parties of one run on one field vector per site.
    input_sizes : sequence of int
        Elements of each site's input vector.
    probes : int
        Random points the map is checked at, ≥ 1.
    seed : int
        Seed of the random probes.
    progress : callable, optional
        ``progress("linear probes", done, total)``.

    Raises
    ------
    MpcsimError
        When the program fails on the all-zero probe (nothing to extract).
    """
    field = runner.field
    sizes = tuple(int(n) for n in input_sizes)
    found: dict[StreamKey, int] = {}
    zero_inputs = [field.zeros(n) for n in sizes]
    base_views = runner(make_parties(zero_inputs), tape_factory(None, found))
    stopped = aborted(base_views)
    if stopped is not None:
        raise MpcsimError(f"party {stopped.party} aborted: {stopped.reason}")
    variables = Variables(sizes, tuple(sorted(found.items(), key=lambda kv: repr(kv[0]))))
    base, non_field = _record(base_views, field)
    parties = sorted(base)
    rows = tuple(k for p in parties for k in base[p][0])
    owner = np.array([p for p in parties for _ in base[p][0]], dtype=np.int64)
    output = np.array([k[0] == "out" for k in rows], dtype=bool)
    constant = (np.concatenate([base[p][1] for p in parties]) if rows else field.zeros(0))
    n = variables.size
    total = n + probes
    jacobian = np.zeros((len(rows), n), dtype=field.dtype)
    affine = np.ones(len(rows), dtype=bool)
    unstable: set[int] = set()
    bad = set(non_field)
    offsets = np.cumsum([0, *(len(base[p][0]) for p in parties)]).tolist()
    span = {p: slice(offsets[i], offsets[i + 1]) for i, p in enumerate(parties)}

    def run(z: np.ndarray) -> dict[int, np.ndarray] | None:
        inputs = [z[sl] for sl in variables.input_slices()]
        tape = {key: z[sl] for key, sl in variables.stream_slices()}
        try:
            views = runner(make_parties(inputs), tape_factory(tape))
        except MpcsimError:
            return None
        if aborted(views) is not None:
            return None
        got, non = _record(views, field)
        bad.update(non)
        out = {}
        for p in parties:
            keys, values = got.get(p, ((), field.zeros(0)))
            if keys != base[p][0]:
                unstable.add(p)
                out[p] = np.zeros(len(base[p][0]), dtype=field.dtype)
            else:
                out[p] = values
        return out

    failed = False
    for i in range(n):
        z = field.zeros(n)
        z[i] = 1
        got = run(z)
        if got is None:
            failed = True
            break
        for p in parties:
            jacobian[span[p], i] = field.sub(got[p], constant[span[p]])
        if progress is not None:
            progress("linear probes", i + 1, total)
    rng = seeds.rng(seed, "audit.linear")
    for j in range(probes):
        if failed:
            break
        z = field.random(rng, n)
        got = run(z)
        if got is None:
            failed = True
            break
        predicted = field.add(constant, _matvec(field, jacobian, z))
        actual = np.concatenate([got[p] for p in parties]) if rows else field.zeros(0)
        affine &= actual == predicted
        if progress is not None:
            progress("linear probes", n + j + 1, total)
    if failed:  # the program refuses some probe: nothing is known to be affine
        affine[:] = False
        unstable.update(parties)
    return AffineMap(rows, owner, output, constant, jacobian, affine, frozenset(unstable),
                     frozenset(bad), variables, probes)


def _matvec(field: PrimeField, matrix: np.ndarray, z: np.ndarray) -> np.ndarray:
    if matrix.shape[0] == 0 or matrix.shape[1] == 0:
        return field.zeros(matrix.shape[0])
    return field.sum(field.mul(matrix, z[None, :]), axis=1)


def _unique_rows(matrix: np.ndarray) -> np.ndarray:
    """Indices of the first occurrence of each distinct non-zero row."""
    nonzero = np.nonzero(matrix.any(axis=1))[0]
    if nonzero.size == 0:
        return nonzero
    _, first = np.unique(matrix[nonzero], axis=0, return_index=True)
    return nonzero[np.sort(first)]


def decide(affine_map: AffineMap, coalition: Sequence[int], field: PrimeField) -> AuditResult:
    """The exact verdict for one coalition, from the probed map (module docstring)."""
    members = tuple(sorted(int(m) for m in coalition))
    member_set = set(members)
    am = affine_map
    mine = np.isin(am.owner, members)
    power = {"exact": True, "affinity_probes": am.probes,
             "covers": "every function of the honest inputs, given affinity (a polynomial of "
                       f"degree D ≥ 2 passes the {am.probes} random probes with probability "
                       f"≤ (D/p)^{am.probes})"}
    figures: dict[str, Any] = {"variables": am.variables.size,
                               "input_elements": am.variables.n_inputs,
                               "drawn_elements": am.variables.size - am.variables.n_inputs,
                               "view_elements": int((mine & ~am.output).sum()),
                               "probes": am.variables.size + 1 + am.probes}
    for reason, parties in (("received or output values that are not field elements",
                             am.non_field),
                            ("messages that appear, vanish or change size between probes "
                             "(they depend on values)", am.unstable)):
        hit = sorted(member_set & parties)
        if hit:
            return AuditResult(members, METHOD, NOT_APPLICABLE, details={
                **figures, "reason": f"party {hit[0]} {reason}; the linear audit needs a view "
                                     "that is an affine map over GF(p)"})
    broken = np.nonzero(mine & ~am.affine)[0]
    if broken.size:
        key = am.rows[broken[0]]
        return AuditResult(members, METHOD, NOT_APPLICABLE, None, _call_of(key),
                           _row_name(key), None, {
                               **figures, "non_affine_elements": int(broken.size),
                               "reason": "this element is not affine in the inputs and draws "
                                         "(it differs from the probed affine map at a random "
                                         "point)"})
    known = am.variables.known(members)
    honest_inputs = np.zeros(am.variables.size, dtype=bool)
    for party, sl in enumerate(am.variables.input_slices()):
        honest_inputs[sl] = party not in member_set
    hidden_draws = ~known & ~honest_inputs
    out_rows = np.nonzero(mine & am.output)[0]
    if am.jacobian[np.ix_(out_rows, np.nonzero(hidden_draws)[0])].any():
        return AuditResult(members, METHOD, NOT_APPLICABLE, details={
            **figures, "reason": "the coalition's outputs depend on draws it does not know, so "
                                 "'the same output' is not a property of the inputs"})
    view_rows = np.nonzero(mine & ~am.output)[0]
    h_cols = np.nonzero(honest_inputs)[0]
    u_cols = np.nonzero(hidden_draws)[0]
    u_cols = u_cols[am.jacobian[np.ix_(view_rows, u_cols)].any(axis=0)] if view_rows.size \
        else u_cols[:0]
    unknown = np.concatenate([u_cols, h_cols])
    kept = view_rows[_unique_rows(am.jacobian[np.ix_(view_rows, unknown)])]
    figures.update({"honest_input_elements": int(h_cols.size),
                    "hidden_draw_elements": int(u_cols.size),
                    "independent_view_rows": int(kept.size)})
    if kept.size == 0:
        return AuditResult(members, METHOD, PRIVATE, power=power, details={
            **figures, "revealed_dimension": 0, "output_dimension": 0})
    n_u, n_h = u_cols.size, h_cols.size
    reduced, rank_u = eliminate(field, am.jacobian[np.ix_(kept, unknown)], n_u)
    revealed = reduced[rank_u:, n_u:]  # the rows with no B_U part: F
    outputs_h, out_pivots = field.row_reduce(am.jacobian[np.ix_(out_rows, h_cols)])
    out_rank = len(out_pivots)
    residual = revealed.copy()
    for r, c in enumerate(out_pivots):
        factor = residual[:, c].copy()
        if factor.any():
            residual = field.sub(residual, field.mul(factor[:, None], outputs_h[r][None, :]))
    figures.update({"revealed_dimension": _rank(field, revealed), "output_dimension": out_rank})
    beyond = np.nonzero(residual.any(axis=1))[0]
    if beyond.size == 0:
        return AuditResult(members, METHOD, PRIVATE, power=power, details=figures)
    j = int(beyond[0])
    figures["beyond_outputs_dimension"] = _rank_beyond(field, outputs_h[:out_rank], revealed)
    # Again with the identity alongside, to read off the combination w behind row j.
    tracked = np.concatenate([am.jacobian[np.ix_(kept, unknown)],
                              np.eye(kept.size, dtype=field.dtype)], axis=1)
    tracked, _ = eliminate(field, tracked, n_u)
    witness = _witness(am, field, kept, tracked[rank_u + j, n_u + n_h:], members)
    first = witness["view"][0]
    return AuditResult(members, METHOD, LEAK, None, first["call"], first["message"], None,
                       {**figures, "witness": witness})


def eliminate(field: PrimeField, matrix: np.ndarray, n_cols: int) -> tuple[np.ndarray, int]:
    """Forward Gaussian elimination over GF(p) with pivots in the first ``n_cols`` columns.

    Returns the transformed matrix (row operations only, so the row space is unchanged) and
    the number r of pivot rows: rows r.. are zero in the first ``n_cols`` columns, and they
    span every combination of the input rows that is.
    """
    a = np.array(matrix, dtype=field.dtype, copy=True)
    r = 0
    for c in range(n_cols):
        if r == a.shape[0]:
            break
        nz = np.nonzero(a[r:, c])[0]
        if nz.size == 0:
            continue
        piv = r + int(nz[0])
        if piv != r:
            a[[r, piv]] = a[[piv, r]]
        below = r + 1 + np.nonzero(a[r + 1:, c])[0]
        if below.size:
            inv = field.inv_scalar(int(a[r, c]))
            factors = field.mul(a[below, c], field.elements(np.array([inv], dtype=object)))
            a[below] = field.sub(a[below], field.mul(factors[:, None], a[r][None, :]))
        r += 1
    return a, r


def _rank(field: PrimeField, matrix: np.ndarray) -> int:
    return 0 if matrix.size == 0 else field.rank(matrix)


def _rank_beyond(field: PrimeField, outputs: np.ndarray, revealed: np.ndarray) -> int:
    both = np.concatenate([outputs, revealed], axis=0)
    return len(field.row_reduce(both)[1]) - outputs.shape[0]


def _call_of(key: RowKey) -> int:
    return int(key[3])


def _row_name(key: RowKey) -> str:
    if key[0] == "recv":
        _, receiver, protocol, call, step, sender, k, _e = key
        return message_name(Call(protocol, call), (receiver, sender, step, k))
    _, party, protocol, call, label, k, _e = key
    return f"output {label!r} of {protocol}#{call} at {party}"


def _stream_name(key: StreamKey) -> str:
    return "/".join(str(part) for part in key)


def _witness(
    am: AffineMap, field: PrimeField, kept: np.ndarray, w: np.ndarray, members: tuple[int, ...]
) -> dict[str, Any]:
    """The leak's identity Σ w·V = f·x_H + g·x_C + k·r_known + constant (module docstring)."""
    nz = np.nonzero(w)[0]
    rows = kept[nz]
    coef = w[nz]
    view = [{"message": _row_name(am.rows[r]), "call": _call_of(am.rows[r]),
             "element": int(am.rows[r][-1]), "coefficient": int(c)}
            for r, c in zip(rows.tolist(), coef, strict=True)]
    full = _matvec(field, am.jacobian[rows].T, coef) if rows.size else field.zeros(0)
    constant = int(_matvec(field, am.constant[rows][None, :], coef)[0])
    reveals: dict[str, dict[str, int]] = {}
    coalition_inputs: dict[str, dict[str, int]] = {}
    draws: dict[str, dict[str, int]] = {}
    for col in np.nonzero(full)[0].tolist():
        kind, who, element = am.variables.describe(col)
        value = int(full[col])
        if kind == "input":
            target = coalition_inputs if who in members else reveals
            target.setdefault(str(who), {})[str(element)] = value
        else:
            draws.setdefault(_stream_name(who), {})[str(element)] = value
    return {"view": view, "reveals": reveals, "coalition_inputs": coalition_inputs,
            "known_draws": draws, "constant": constant,
            "identity": "Σ coefficient·view element = Σ reveals·honest input + Σ "
                        "coalition_inputs·own input + Σ known_draws·draw + constant (mod p)"}


def linear_audits(
    runner: Runner,
    make_parties: Callable[[Sequence[np.ndarray]], list[Party]],
    input_sizes: Sequence[int],
    coalitions: Sequence[Sequence[int]],
    *,
    probes: int = 3,
    seed: int = 0,
    progress: Progress | None = None,
) -> list[AuditResult]:
    """Linear audits of several coalitions from one set of probes.

    Parameters
    ----------
    runner : Runner
        Runs parties with injected randomness; its field is the audit's.
    make_parties : callable
        ``make_parties(inputs)``: the parties of one run on one field vector per site.
    input_sizes : sequence of int
        Elements of each site's input.
    coalitions : sequence of sequence of int
        The coalitions to decide.
    probes : int
        Random probes that confirm affinity, ≥ 1.
    seed : int
        Seed of the random probes.
    progress : callable, optional
        ``progress(stage, done, total)``.

    Returns
    -------
    list of AuditResult
        One per coalition, in order; ``method = "linear"``.
    """
    field = runner.field
    recorded = RecordingRunner(runner)  # every probe's message pattern (parties.audit.pattern)
    try:
        affine_map = probe(recorded, make_parties, input_sizes, probes=probes, seed=seed,
                           progress=progress)
    except MpcsimError as exc:
        return [recorded.leak(c, METHOD) or AuditResult(
            tuple(sorted(c)), METHOD, NOT_APPLICABLE, details={
                "reason": f"the program fails on the all-zero probe: {exc}"})
            for c in coalitions]
    out = []
    for i, coalition in enumerate(coalitions):
        out.append(recorded.leak(coalition, METHOD) or decide(affine_map, coalition, field))
        if progress is not None:
            progress("linear decisions", i + 1, len(coalitions))
    return out
