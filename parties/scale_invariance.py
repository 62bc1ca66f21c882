"""The scale-invariance audit of NormedSecureSum (spec ``normed_secure_sum.md`` §6.2 item 2).

NormedSecureSum's declared output is the direction s/‖s‖ only. So two runs whose sums share a
direction but differ in norm — S and λS with λ ∈ (1, 2), not a power of two — have the same
ideal output, and a coalition's views of the two must be indistinguishable (up to 2^−κ per
masked opening and the approximation leakage of spec §4.5). This audit compares them.

A coalition C (1 ≤ |C| ≤ M − 1) sees (i) shares the others send it — input shares and dealer
material, uniform whatever the inputs — and (ii) every opened value, which it reconstructs as
the shares its members sent plus the shares the honest parties sent it (every opening is a
broadcast of shares). Its members' own shares are read from the messages they sent, which
the honest recipients' views hold. Both runs are batched: one NormedSecureSum call on many
identical instances draws fresh dealer masks per instance, so each run gives one sample per
instance for every opening.

Per step of the call (the ledger's ``step`` tag; an opening step is ``NN.kind.label``) the
audit pools the values of all instances and compares run A with run B by

* a two-sample Kolmogorov–Smirnov test on the values (the "high part": floats keep the top
  53 bits),
* for openings, Welch's t-test on the values — a secret that leaks through a too-narrow mask
  shifts the opened value's mean, which the t-test sees with about twice the power of KS —
  and a χ² test of homogeneity on the residues mod 2^8 (the low part),

and combines all p-values with Holm's correction. Verdict ``leak`` when the smallest
adjusted p-value is below α; ``private`` otherwise, together with the KS distance the test
could have detected at that level (``detectable_ks_distance``), so "private" is never said
without the power it rests on. The audit is tested with planted leaks it must catch: weak
masking (κ = 2), the ``reveal_norm`` and ``secure_sum`` variants, and an output precision
f_out close to F (approximation leakage).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from parties.view import View
from protocols.field.mersenne127 import mpc_field

RESIDUE_BITS = 8
OPENINGS = ("beaver", "masked", "output")


@dataclass(frozen=True)
class ScaleAuditResult:
    """The verdict of one scale-invariance audit of one coalition."""

    coalition: tuple[int, ...]
    verdict: str  # "leak" | "private"
    min_adjusted_p: float
    tests: int
    samples: tuple[int, int]
    detectable_ks_distance: float
    alpha: float
    worst_step: str
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"coalition": list(self.coalition), "method": "scale_invariance",
                "verdict": self.verdict, "min_adjusted_p": self.min_adjusted_p,
                "tests": self.tests, "samples": list(self.samples),
                "detectable_ks_distance": self.detectable_ks_distance, "alpha": self.alpha,
                "worst_step": self.worst_step, **self.details}


def _values(payload: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(values as float64, residues mod 2^8) of an element payload (uint64 or 127-bit)."""
    a = np.asarray(payload).reshape(-1)
    if a.dtype.names == ("lo", "hi"):
        values = a["hi"].astype(np.float64) * 2.0**64 + a["lo"].astype(np.float64)
        return values, (a["lo"] & np.uint64(255)).astype(np.int64)
    if a.dtype == object:
        return (np.array([float(v) for v in a.tolist()]),
                np.array([int(v) & 255 for v in a.tolist()], dtype=np.int64))
    return a.astype(np.float64), (a.astype(np.uint64) & np.uint64(255)).astype(np.int64)


def coalition_samples(
    views: Mapping[int, View], coalition: Sequence[int], protocol: str, prime: int
) -> dict[str, tuple[np.ndarray, np.ndarray | None]]:
    """The coalition's view of every step of ``protocol``: {step: (values, residues)}.

    Opening steps (``NN.kind.label``, kind beaver/masked/output) give the opened values; other
    steps (input shares, dealer material) the payloads the coalition received from others.
    """
    field = mpc_field(prime)
    members = set(coalition)
    shares: dict[tuple[int, str], dict[int, np.ndarray]] = {}  # broadcasts: one per sender
    received: dict[tuple[int, str], list[np.ndarray]] = {}
    for party, view in views.items():
        for msg in view.received:
            if msg.protocol not in (protocol, "dealer"):
                continue
            key = (msg.call, msg.step)
            kind = msg.step.split(".")[1] if msg.step.count(".") >= 2 else ""
            if kind in OPENINGS:
                shares.setdefault(key, {}).setdefault(msg.sender, msg.payload)
            elif party in members and msg.sender not in members:
                received.setdefault(key, []).append(msg.payload)
    out: dict[str, tuple[np.ndarray, np.ndarray | None]] = {}
    for (call, step), by_sender in sorted(shares.items()):
        opened = field.sum(np.stack([np.asarray(v) for v in by_sender.values()]), axis=0)
        out[f"{call}:{step}"] = _values(opened)
    for (call, step), payloads in sorted(received.items()):
        out[f"{call}:{step}"] = (np.concatenate([_values(x)[0] for x in payloads]), None)
    return out


def scale_invariance_audit(
    views_a: Mapping[int, View],
    views_b: Mapping[int, View],
    coalition: Sequence[int],
    protocol: str,
    prime: int,
    alpha: float = 1e-3,
) -> ScaleAuditResult:
    """Compare a coalition's views of run A (sum S) and run B (sum λS); see the module doc."""
    from scipy import stats  # ~1-2 s to load: only when the audit runs, not with the entry

    a = coalition_samples(views_a, coalition, protocol, prime)
    b = coalition_samples(views_b, coalition, protocol, prime)
    names, pvals = [], []
    opened = [len(a[s][0]) for s in a if a[s][1] is not None] or [len(v) for v, _ in a.values()]
    n_a = n_b = min(opened)  # the smallest sample: one value per instance
    for step in sorted(set(a) & set(b)):
        (va, ra), (vb, rb) = a[step], b[step]
        if np.ptp(np.concatenate([va, vb])) > 0:
            pvals.append(float(stats.ks_2samp(va, vb, method="asymp").pvalue))
            names.append(f"{step} (KS)")
            if ra is not None:  # openings: a shift of a masked value moves its mean
                scale = max(float(np.abs(np.concatenate([va, vb])).max()), 1.0)
                with warnings.catch_warnings():  # near-constant samples: p is still valid
                    warnings.simplefilter("ignore", RuntimeWarning)
                    p_t = float(stats.ttest_ind(va / scale, vb / scale, equal_var=False).pvalue)
                pvals.append(p_t if np.isfinite(p_t) else 1.0)
                names.append(f"{step} (Welch t)")
        if ra is not None and rb is not None:
            counts = np.stack([np.bincount(ra, minlength=1 << RESIDUE_BITS),
                               np.bincount(rb, minlength=1 << RESIDUE_BITS)])
            counts = counts[:, counts.sum(axis=0) > 0]
            if counts.shape[1] > 1:
                pvals.append(float(stats.chi2_contingency(counts)[1]))
                names.append(f"{step} (χ² mod 2^{RESIDUE_BITS})")
    if not pvals:
        raise ValueError("the two runs share no step to compare")
    order = np.argsort(pvals)
    m = len(pvals)
    adjusted = np.maximum.accumulate([min(1.0, (m - i) * pvals[j])
                                      for i, j in enumerate(order)])
    worst = int(order[0])
    c_alpha = np.sqrt(-np.log(alpha / (2 * m)) / 2)
    detectable = float(c_alpha * np.sqrt((n_a + n_b) / max(n_a * n_b, 1)))
    return ScaleAuditResult(
        coalition=tuple(sorted(coalition)),
        verdict="leak" if adjusted[0] < alpha else "private",
        min_adjusted_p=float(adjusted[0]),
        tests=m,
        samples=(n_a, n_b),
        detectable_ks_distance=detectable,
        alpha=alpha,
        worst_step=names[worst],
    )
