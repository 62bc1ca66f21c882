"""NormedSecureSum: every party learns s/‖s‖₂ of s = Σ_m x_m, and nothing else.

Tsikhanovich thesis (seed 001), Fig. 2.3 and Table 2.2; the construction is the one of
``spec/normed_secure_sum.md`` (§2), on the arithmetic-sharing engine :mod:`protocols.mpc`
(semi-honest, additive shares over GF(p), a trusted dealer for preprocessing, statistical
security parameter κ).

Functionality. M ≥ 2 parties each hold x_m ∈ R^d. Inputs are encoded as X_m = round(x_m·2^f)
and range-checked (|X_m,i| ≤ 2^(k_in − 1) − 1, before anything is sent); the "true" input is
the encoded sum S = Σ_m X_m, and every party outputs y* = S/√Q, Q = ‖S‖², at f_out fractional
bits (the zero vector when S = 0). Steps, from one party's point of view (§2.3):

(a) share inputs → [S] (1 round); (b) [Q] = Σ [S_i]² with square pairs (1 round);
(c1) BitDec([Q], ℓ); (c2) top non-zero bit pair → secret [V] = 2^e, [V₂] = 4^e, zero flag [ζ]
(:mod:`protocols.mpc.normalize`); (c3) [S′] = [S]·[V] (one δ for V per row: O1) and
[Q′] = [Q]·[V₂] in one Beaver round, Q′ += 3·2^(ℓ−2)·ζ (zero guard), [x] = TruncPr([Q′], ℓ + 1,
ℓ − F), so x ≈ q′·2^F with q′ = Q′/2^ℓ ∈ [1/4, 1); (c4)–(c5) [u] ≈ 2^F/√q′
(:mod:`protocols.mpc.inv_sqrt`, every product local by masked evaluation: O2); (d) [W] =
[S′]·[u] (O1), [Y] = TruncPr([W], ℓ/2 + F + 3, ℓ/2 + F − f_out), open Y: y = Y/2^f_out.

Because the output is scale-invariant, the normalisation by 2^e is never undone and neither e
nor ‖s‖ is ever opened. Every opened value is a Beaver difference (uniform), a masked value
within 2^−κ of a fixed distribution, or the output (§2.4).

Cost (:func:`declared_cost`, held to the ledger by a contract test), per instance:
rounds 10 + 2L + 2t (L = ⌈log₂ ℓ⌉); opened elements N = 5d + 4B(ℓ) + 2B(ℓ/2) + ℓ + 8 + 3t;
sent per party (M − 1)(d + N); offline (dealer) material per party as §2.7 with O1's row
triples and O2's products of high masks. That is the spec's baseline (11 + 2L + 4t rounds,
7d + … + 7 + 9t openings, §3) less O2 in the seed (1 round, 1 opening) and in each Newton
step (2 rounds, 6 openings), and less O1 in the two products by one value per row (d − 1
openings each): 30 rounds instead of 37 at t = 3, ℓ ∈ (64, 128]. A batch of k instances (an
input of shape (k, d), as PD-SVD's k columns) runs in the same rounds with k times the
elements.

Variants (named for comparison runs, §5):

``normed``
    The protocol above: reveals only the direction.
``reveal_norm``
    Also opens Q = ‖S‖² (so ‖s‖, and with the direction all of s): steps (a), (b), open Q,
    then Y_i = ⌊S_i·c/2^g⌋ with the public c = round(2^(f_out+g)/√Q) by a dithered opening
    (O4). 4 rounds, 2d + 1 opened elements; needs no κ headroom, so it runs at p = 2^61 − 1.
``secure_sum``
    Opens S itself (SecureSum, then normalise locally): 2 rounds, d opened elements.

Parameters (:class:`NssParams`; presets :data:`PRESETS` from spec §1.5): f = 16, k_in = 32,
κ = 40, F = 40, f_out = 20, t = 3 at p = 2^127 − 1 ("p127-default"). The validator
(:func:`check_layout`) derives k = k_in + ⌈log₂ M⌉ and ℓ = 2(k − 1) + ⌈log₂ d⌉ (rounded up to
even) and requires the headroom rule (H) of every masked opening, ℓ + κ + 2 ≤ λ_p,
2F + κ + 6 ≤ λ_p and ℓ/2 + F + κ + 4 ≤ λ_p with λ_p = ⌊log₂ p⌋; a violated bound is an
:class:`HeadroomError` naming it. κ < 40 is refused unless the caller opts in with
``demo = True``; at p = 2^61 − 1 the full protocol cannot meet (H) with κ = 40, so it is
refused unless the documented demo parameters ("p61-demo": κ = 20, 2^−20 leakage per masked
opening, not a privacy guarantee) are chosen.

Departures: the dealer sends every share explicitly (no PRG-seeded dealing, see
:mod:`protocols.mpc.dealer`); of the optional optimisations of §2.6, O1 (for the products by
one value per row) and O2 (the inverse square root) are implemented — they open the same
kinds of values at the same K, fewer of them — while O3, O4 and H1 are not.
"""

from __future__ import annotations

import math
from collections.abc import Generator, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from protocols.context import PartyContext
from protocols.effects import Call, Input, Output
from protocols.errors import EncodingError, FieldOverflowError, InputError
from protocols.field import MERSENNE61
from protocols.field.mersenne127 import mpc_field
from protocols.mpc import bits as bits_mod
from protocols.mpc import inv_sqrt as inv_sqrt_mod
from protocols.mpc import normalize as normalize_mod
from protocols.mpc.dealer import Plan, Pool, Request, dealer, plan_elements, receive_material
from protocols.mpc.inv_sqrt import inv_sqrt
from protocols.mpc.masked import trunc_masked
from protocols.mpc.multiply import multiply_rows, square
from protocols.mpc.normalize import pair_normalizer
from protocols.mpc.public import check_range, constants, signed, signed_int64, small, to_ints
from protocols.mpc.session import OUTPUT, Session, share_input
from protocols.mpc.truncate import trunc_pr
from protocols.vocabulary import NSS_PRESET_NAMES, NSS_VARIANTS

PROTOCOL = "normed_secure_sum"

VARIANTS: tuple[str, ...] = NSS_VARIANTS

REVEALED_NORM = "norm_sq"
"""``reveal_norm``'s declared leakage: Q = ‖S‖² of the encoded sum (Python ints, per row)."""
REVEALED_DITHER = "direction_dithered"
"""``reveal_norm``'s dithered opening w + r_lo, w = S_i·round(2^(f_out+g)/√Q) (Python ints,
flat: row after row)."""
REVEALED_SUM = "sum"
"""``secure_sum``'s declared leakage: the encoded sum S = Σ_m round(x_m·2^f) (int64)."""
DEMO_KAPPA_FLOOR = 40


class HeadroomError(InputError):
    """NormedSecureSum parameters break a headroom bound (a masked value could wrap or leak)."""


@dataclass(frozen=True)
class NssParams:
    """Public parameters of NormedSecureSum (spec §1.1, §1.5).

    Attributes
    ----------
    frac_bits : int
        f, fractional bits of the input encoding.
    input_bits : int
        k_in, signed bit length of one party's encoded input (|X| ≤ 2^(k_in − 1) − 1).
    kappa : int
        κ, statistical security parameter of masked openings (leakage ≤ 2^−κ each).
    work_bits : int
        F, fractional bits of the working precision of the 1/√ stage.
    out_bits : int
        f_out, fractional bits of the output.
    newton_steps : int
        t, Newton iterations after the quadratic seed.
    demo : bool
        Opt in to κ < 40 (weak masking: the p61 demo set and audits' positive controls).
    """

    frac_bits: int = 16
    input_bits: int = 32
    kappa: int = 40
    work_bits: int = 40
    out_bits: int = 20
    newton_steps: int = 3
    demo: bool = False

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


PRESETS: dict[str, NssParams] = dict(zip(NSS_PRESET_NAMES, (
    NssParams(),  # p127-default
    NssParams(input_bits=29),  # p127-wide-d
    NssParams(out_bits=16, newton_steps=2),  # p127-fast
    NssParams(frac_bits=8, input_bits=16, kappa=20, work_bits=17, out_bits=10,  # p61-demo
              newton_steps=2, demo=True),
), strict=True))
"""The parameter sets of spec §1.5 (P127-κ64 is left out: it needs κ = 64 budgets)."""


@dataclass(frozen=True)
class Layout:
    """The public sizes of one NormedSecureSum: parameters, field, M and d (validated)."""

    params: NssParams
    prime: int
    n_parties: int
    dim: int
    variant: str

    @property
    def lam(self) -> int:
        """λ_p = ⌊log₂ p⌋, the bit budget of masked openings."""
        return self.prime.bit_length() - 1

    @property
    def sum_bits(self) -> int:
        """k = k_in + ⌈log₂ M⌉, signed bit length of the encoded sum S."""
        return self.params.input_bits + math.ceil(math.log2(self.n_parties))

    @property
    def ell(self) -> int:
        """ℓ = 2(k − 1) + ⌈log₂ d⌉ rounded up to even: bit length of Q = ‖S‖²."""
        raw = 2 * (self.sum_bits - 1) + math.ceil(math.log2(self.dim))
        return raw + raw % 2

    @property
    def levels(self) -> int:
        """L = ⌈log₂ ℓ⌉."""
        return bits_mod.levels(self.ell)

    @property
    def dither_bits(self) -> int:
        """g, the extra fractional bits of ``reveal_norm``'s public scale."""
        return min(40, self.lam - self.params.out_bits - 3)

    @property
    def output_trunc(self) -> tuple[int, int]:
        """(K, m) of the output truncation of ``normed``."""
        p = self.params
        return self.ell // 2 + p.work_bits + 3, self.ell // 2 + p.work_bits - p.out_bits


def _check_int(name: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise InputError(f"{name} = {value!r} must be an integer in [{low}, {high}]")
    if not low <= int(value) <= high:
        raise InputError(f"{name} = {value} is out of range [{low}, {high}]")
    return int(value)


def check_layout(params: NssParams, prime: int, n_parties: int, dim: int,
                 variant: str = "normed") -> Layout:
    """Validate parameters against the field, M and d; return the derived sizes.

    Raises
    ------
    InputError
        For an unknown variant or a parameter out of its range.
    HeadroomError
        When a headroom bound (H) of spec §1.3–1.5 is violated; the message names it.
    """
    if variant not in VARIANTS:
        raise InputError(f"NormedSecureSum variant {variant!r} is unknown; use one of "
                         f"{', '.join(VARIANTS)}")
    _check_int("n_parties (M)", n_parties, 2, 1 << 20)
    _check_int("dimension d", dim, 1, 1 << 40)
    _check_int("frac_bits", params.frac_bits, 0, 60)
    _check_int("input_bits", params.input_bits, 2, 62)
    _check_int("kappa", params.kappa, 1, 200)
    _check_int("work_bits", params.work_bits, 2, 200)
    _check_int("out_bits", params.out_bits, 1, params.work_bits - 1)
    _check_int("newton_steps", params.newton_steps, 0, 10)
    layout = Layout(params, prime, n_parties, dim, variant)
    lam, ell, kappa, F = layout.lam, layout.ell, params.kappa, params.work_bits
    where = (f"(input_bits = {params.input_bits}, M = {n_parties}, d = {dim} give "
             f"k = {layout.sum_bits}, ℓ = {ell}; κ = {kappa}, F = {F}; p = 2^{lam + 1}-…)")
    if variant == "secure_sum":
        if layout.sum_bits + 1 > lam:
            raise HeadroomError(f"the encoded sum needs k + 1 = {layout.sum_bits + 1} ≤ "
                                f"⌊log2 p⌋ = {lam} bits {where}; lower input_bits")
        return layout
    if prime == MERSENNE61 and variant == "normed" and not params.demo:
        raise HeadroomError(
            "NormedSecureSum cannot run at p = 2^61-1 with κ = 40 statistical masking (every "
            "masked opening needs K + κ + 1 ≤ 60 bits, so K ≤ 19); use preset 'p61-demo' (opt-in "
            "demo parameters: κ = 20, 2^-20 leakage per masked opening, not a privacy "
            "guarantee) or prime = '2^127-1'"
        )
    if ell > lam:
        raise HeadroomError(f"‖S‖² needs ℓ = {ell} ≤ ⌊log2 p⌋ = {lam} bits {where}; lower "
                            "input_bits or use a larger prime")
    if variant == "reveal_norm":
        g = layout.dither_bits
        if g < 1:
            raise HeadroomError(f"reveal_norm needs out_bits + 4 < ⌊log2 p⌋ = {lam}, "
                                f"got out_bits = {params.out_bits}")
        return layout
    if kappa < DEMO_KAPPA_FLOOR and not params.demo:
        hint = (" At p = 2^61-1 the protocol cannot meet the headroom rule with κ = 40; "
                "use preset 'p61-demo' (κ = 20, 2^-20 leakage per masked opening, not a "
                "privacy guarantee) or prime = '2^127-1'." if prime == MERSENNE61 else "")
        raise HeadroomError(f"kappa = {kappa} is below {DEMO_KAPPA_FLOOR}; set demo = true to "
                            f"opt in to weak statistical masking.{hint}")
    bounds = [
        ("ℓ + κ + 2 (BitDec of Q and TruncPr of Q′)", ell + kappa + 2),
        ("2F + κ + 6 (TruncPr in the Newton stage)", 2 * F + kappa + 6),
        ("ℓ/2 + F + κ + 4 (TruncPr of the output)", ell // 2 + F + kappa + 4),
    ]
    for name, need in bounds:
        if need > lam:
            hint = ("use preset 'p61-demo' (opt-in demo parameters, κ = 20) or prime = "
                    "'2^127-1'" if prime == MERSENNE61 else
                    "lower input_bits, work_bits or kappa, or use a larger prime")
            raise HeadroomError(f"NormedSecureSum parameters break the headroom bound {name} "
                                f"≤ ⌊log2 p⌋: {need} > {lam} {where}; {hint}")
    if F >= ell:
        raise HeadroomError(f"work_bits = {F} must be below ℓ = {ell}")
    return layout


def encode_inputs(values: np.ndarray, params: NssParams, what: str = "input") -> np.ndarray:
    """X = round(x·2^f) as int64, refusing NaN/inf and |X| > 2^(k_in − 1) − 1 (spec §1.2)."""
    arr = np.asarray(values, dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        bad = arr[~np.isfinite(arr)].ravel()[0]
        raise EncodingError(f"NormedSecureSum {what} holds {bad!r}; only finite values can be "
                            "encoded")
    limit = (1 << (params.input_bits - 1)) - 1
    scaled = np.rint(arr * float(1 << params.frac_bits))
    over = np.abs(scaled) > limit
    if over.any():
        idx = int(np.argmax(over.ravel()))
        raise FieldOverflowError(
            float(arr.ravel()[idx]), limit / float(1 << params.frac_bits),
            f"NormedSecureSum {what} (element {idx})",
            f"the declared input range is |x| ≤ (2^(input_bits-1) - 1)/2^frac_bits with "
            f"input_bits = {params.input_bits}, frac_bits = {params.frac_bits}; scale the "
            "inputs down (the direction does not change) or raise input_bits if the headroom "
            "allows",
        )
    return scaled.astype(np.int64)


# -- dealer plans and declared costs ------------------------------------------------------------


def dealer_plan(layout: Layout, batch: int = 1) -> Plan:
    """The dealer material of one call on ``batch`` instances, in the order it is used."""
    d, ell, b = layout.dim, layout.ell, batch
    p = layout.params
    kappa, F, t = p.kappa, p.work_bits, p.newton_steps
    if layout.variant == "secure_sum":
        return ()
    if layout.variant == "reveal_norm":
        g = layout.dither_bits
        return (Request("square", b * d), Request("trunc", b * d, bits=g, m=g))
    plan = [Request("square", b * d), Request("bit", b * ell), Request("mask", b, bits=kappa)]
    plan += [Request("triple", 2 * b * len(hi)) for hi, _ in bits_mod.network(ell)]
    plan.append(Request("triple", b * (ell // 2)))
    plan += [Request("triple", b * len(hi)) for hi, _ in bits_mod.network(ell // 2)]
    plan += [Request("rowtriple", b * d, m=d), Request("triple", b),
             Request("trunc", b, bits=ell + 1 + kappa, m=ell - F)]
    plan += inv_sqrt_mod.plan(len(plan), len(plan) - 1, b, F, kappa, t)
    K, m = layout.output_trunc
    plan += [Request("rowtriple", b * d, m=d), Request("trunc", b * d, bits=K + kappa, m=m)]
    return tuple(plan)


@dataclass(frozen=True)
class NssCost:
    """Declared cost of one NormedSecureSum call, per data holder.

    Attributes
    ----------
    rounds : int
        Online communication rounds.
    opened : int
        Field elements opened (each opening: every party sends its share to M − 1 others).
    input_shares : int
        Elements of the input sharing step each party sends: d(M − 1) per instance.
    sent : int
        Online elements sent per party: (M − 1)(d + N) per instance.
    offline : int
        Dealer material received per party (the dealer sends M times this).
    """

    rounds: int
    opened: int
    input_shares: int
    sent: int
    offline: int


def declared_cost(layout: Layout, batch: int = 1) -> NssCost:
    """Rounds and elements of one call, as the sum of the primitives' declared costs."""
    d, m1, b = layout.dim, layout.n_parties - 1, batch
    p = layout.params
    if layout.variant == "secure_sum":
        rounds, opened = 2, d
    elif layout.variant == "reveal_norm":
        rounds, opened = 4, 2 * d + 1
    else:
        norm = normalize_mod.cost(layout.ell)
        root = inv_sqrt_mod.cost(p.newton_steps)
        # (a) 1; (b) 1 / d; (c1)+(c2); (c3) 2 / (d + 1) + 2 + 1 (O1); (c4)+(c5) with O2;
        # (d) 3 / (d + 1) + d + d (O1)
        rounds = 1 + 1 + norm["rounds"] + 2 + root["rounds"] + 3
        opened = d + norm["opened"] + (d + 1) + 2 + 1 + root["opened"] + (d + 1) + 2 * d
    return NssCost(rounds=rounds, opened=b * opened, input_shares=b * d * m1,
                   sent=b * m1 * (d + opened), offline=plan_elements(dealer_plan(layout, b)))


def spec_formula(layout: Layout) -> tuple[int, int]:
    """(rounds, opened) per instance by the closed forms of spec §3 (for cross-checks).

    The baseline's 11 + 2L + 4t rounds and 7d + 4B(ℓ) + 2B(ℓ/2) + ℓ + 7 + 9t openings, less
    what O2 saves in the seed (1 round, the square's opening) and in each Newton step (2
    rounds, 6 Beaver openings), and what O1 saves in the two products by one value per row
    (S·V and S′·u: d − 1 openings each) (§2.6): 10 + 2L + 2t rounds and
    5d + 4B(ℓ) + 2B(ℓ/2) + ℓ + 8 + 3t openings.
    """
    ell, t, d = layout.ell, layout.params.newton_steps, layout.dim
    B = bits_mod.node_count
    return (10 + 2 * bits_mod.levels(ell) + 2 * t,
            5 * d + 4 * B(ell) + 2 * B(ell // 2) + ell + 8 + 3 * t)


# -- the party programs -------------------------------------------------------------------------


def normed_secure_sum(
    ctx: PartyContext,
    x: Any,
    *,
    variant: str = "normed",
    params: NssParams | None = None,
    instance: int = 0,
    label: str = "x",
) -> Generator[Any, Any, np.ndarray]:
    """Party program: every party outputs s/‖s‖₂ for s = Σ_m x_m.

    Parameters
    ----------
    ctx : PartyContext
        The data holder's context; the run must include one dealer
        (:func:`nss_dealer`) whose plan lists this call as invocation ``instance``.
    x : array_like, shape (d,) or (k, d)
        This party's input; a 2-D input runs k independent instances in one call (same
        rounds, k times the elements).
    variant : {"normed", "reveal_norm", "secure_sum"}
        What is opened (see the module docstring).
    params : NssParams, optional
        Public parameters (:data:`PRESETS` ``"p127-default"`` by default).
    instance : int
        Which of the dealer's invocations this call is (its material's tag).
    label : str
        Name of the input in the view.

    Returns
    -------
    ndarray of float64, shape of ``x``
        The direction at f_out fractional bits (exact S/‖S‖ for ``secure_sum``); zero rows
        where the sum is zero.
    """
    params = params or PRESETS["p127-default"]
    values = np.asarray(x, dtype=np.float64)
    if values.ndim not in (1, 2) or values.shape[-1] < 1:
        raise InputError(f"NormedSecureSum input must have shape (d,) or (k, d), got "
                         f"{values.shape}")
    rows = values.reshape(-1, values.shape[-1])
    batch, dim = rows.shape
    layout = check_layout(params, ctx.field.p, ctx.n_parties, dim, variant)
    encoded = encode_inputs(rows, params, label)
    field = mpc_field(ctx.field.p)
    call = ctx.new_call(PROTOCOL)
    yield Input(label, values, call)
    s = yield from share_input(ctx, field, call, small(field, encoded))
    plan = dealer_plan(layout, batch)
    material = (yield from receive_material(ctx, instance)) if plan else field.zeros(0)
    sess = Session(ctx, field, call, Pool(field, plan, material), params.kappa)
    if variant == "secure_sum":
        opened = yield from sess.open(s, OUTPUT, "sum", bound=1 << (layout.sum_bits - 1))
        yield Output(REVEALED_SUM, signed(field, opened).astype(np.int64), call)
        total = signed(field, opened).astype(np.float64)
        norms = np.linalg.norm(total, axis=1, keepdims=True)
        y = np.divide(total, norms, out=np.zeros_like(total), where=norms > 0)
    elif variant == "reveal_norm":
        y = yield from _reveal_norm(sess, s, layout, call)
    else:
        y = yield from _normed(sess, s, layout)
    y = y.reshape(values.shape)
    yield Output("direction", y, call)
    return y


def _norm_sq(sess: Session, s: np.ndarray) -> Generator[Any, Any, np.ndarray]:
    """(b): shares of Q = Σ_i S_i² for each row of ``s`` (square pairs, one round)."""
    sq = yield from square(sess, s, "norm_sq")
    return sess.field.sum(np.moveaxis(sq, -1, 0), axis=0)


def _normed(sess: Session, s: np.ndarray, layout: Layout) -> Generator[Any, Any, np.ndarray]:
    field, p = sess.field, layout.params
    ell, F = layout.ell, p.work_bits
    q = yield from _norm_sq(sess, s)
    v, v2, zeta = yield from pair_normalizer(sess, q, ell)
    s_scaled, q_v2 = yield from multiply_rows(sess, s, v, "scale", pairs=(q, v2))
    q_scaled = field.add(q_v2, sess.scale(zeta, 3 << (ell - 2)))
    x = yield from trunc_masked(sess, q_scaled, ell + 1, ell - F, "x")
    u = (yield from inv_sqrt(sess, x, F, p.newton_steps)).shares(sess)
    w, _ = yield from multiply_rows(sess, s_scaled, u, "output")
    K, m = layout.output_trunc
    y_shares = yield from trunc_pr(sess, w, K, m, "output")
    y = yield from sess.open(y_shares, OUTPUT, "direction", bound=1 << (p.out_bits + 1))
    return signed_int64(field, y).astype(np.float64) / float(1 << p.out_bits)


def _reveal_norm(sess: Session, s: np.ndarray, layout: Layout, call: Call
                 ) -> Generator[Any, Any, np.ndarray]:
    field, p = sess.field, layout.params
    g = layout.dither_bits
    q = yield from _norm_sq(sess, s)
    q_open = yield from sess.open(q, OUTPUT, "norm_sq", bound=1 << layout.ell)
    q_ints = [int(v) for v in signed(field, q_open).tolist()]
    yield Output(REVEALED_NORM, np.array(q_ints, dtype=object), call)
    scale = [_inv_sqrt_int(v, p.out_bits + g) for v in q_ints]
    w = field.mul(s, constants(field, scale)[:, None])
    K = p.out_bits + g + 2
    # O4's dithered opening (protocols.mpc.truncate.dither_open), keeping the opened value:
    # c − 2^(K−1) = w + r_lo is what every party learns, and what the variant declares
    flat = np.asarray(w).reshape(-1)
    r_lo, _ = sess.pool.take("trunc", flat.size, bits=g, m=g)
    c_share = sess.add_public(field.add(flat, r_lo), sess.const(1 << (K - 1)))
    c = yield from sess.open(c_share, OUTPUT, "direction")
    check_range(field, c, (1 << K) + (1 << g), "dithered output 'direction'")
    dithered = np.array([int(v) - (1 << (K - 1)) for v in to_ints(field, c)], dtype=object)
    yield Output(REVEALED_DITHER, dithered, call)  # flat, row after row
    y = np.array([v >> g for v in dithered], dtype=object).reshape(w.shape)
    return y.astype(np.float64) / float(1 << p.out_bits)


def _inv_sqrt_int(q: int, bits: int) -> int:
    """round(2^bits/√q) for an integer q ≥ 0 (0 for q = 0), exactly."""
    if q <= 0:
        return 0
    num = 1 << (2 * bits + 2)
    return (math.isqrt(num // q) + 1) // 2


def nss_dealer(
    ctx: PartyContext,
    calls: Sequence[tuple[int, int]],
    *,
    variant: str = "normed",
    params: NssParams | None = None,
) -> Generator[Any, Any, None]:
    """Party program of the dealer of a run: material for each call ``(batch, d)``, offline."""
    params = params or PRESETS["p127-default"]
    plans = []
    for batch, dim in calls:
        layout = check_layout(params, ctx.field.p, ctx.n_parties, dim, variant)
        plans.append(dealer_plan(layout, batch))
    yield from dealer(ctx, [plan for plan in plans])


def preset(name: str, **overrides: Any) -> NssParams:
    """A named parameter set (:data:`PRESETS`), with fields overridden."""
    if name not in PRESETS:
        raise InputError(f"NormedSecureSum preset {name!r} is unknown; use one of "
                         f"{', '.join(PRESETS)}")
    return replace(PRESETS[name], **overrides)


# -- the output tolerance (the ideal functionality is protocols.normed_secure_sum_ideal) -------


def output_tolerance(params: NssParams, n_parties: int, dim: int, norm: float) -> float:
    """Largest |y_i − s_i/‖s‖| the protocol's arithmetic allows, per coordinate (spec §4.1).

    1.5 output ulps (final stochastic rounding; spec §4.3 measures < 1 ulp with t = 3 Newton
    steps and 1.47 with t = 2), plus the Newton residual and the fixed-point noise of u
    (e_t + 4·2^−F, relative; |y*_i| ≤ 1), plus the direction error of the input encoding:
    ‖ΔS‖ ≤ √d·M·2^−(f+1) moves S/‖S‖ by at most 2‖ΔS‖/‖s‖.
    """
    residual = {0: 2.4e-2, 1: 8.7e-4, 2: 1.15e-6}.get(params.newton_steps, 2e-12)
    quantisation = math.sqrt(dim) * n_parties * 2.0 ** -(params.frac_bits + 1)
    encoding = 2.0 * quantisation / norm if norm > 0 else 0.0
    return (1.5 * 2.0 ** -params.out_bits + residual + 4 * 2.0 ** -params.work_bits
            + encoding)
