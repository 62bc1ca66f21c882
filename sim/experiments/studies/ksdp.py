"""Experiment ``ksdp``: π-KSDP against party size (thesis §3.1–3.4, Algorithm 11, Figs. 3.5, 3.9,
3.10; claim C10).

For every victim database size n_v in ``party_sizes`` and every one of ``documents`` documents
of interest x (rows of the scenario's corpus), Algorithm 11 draws ``samples`` databases that
contain x (x plus n_v − 1 random other documents) and as many that do not — by the
``simulator`` of §3.2: ``resample`` (n_v fresh random documents other than x, the one §3.4
uses) or ``swap`` (the same database with x swapped for a random other document) — runs the
mechanism on each, evaluates the statistics, and records π = the minimum KS two-sample p-value
(:func:`parties.ksdp.measure`). Metrics give, per size, π's mean over documents and the mean KS
statistic; the output ``p_values`` holds every π (sizes × documents); the plot is π against
party size, one line per mechanism.

Mechanisms (``mechanism``: one name, or a list run on the *same* sampled databases)
-----------------------------------------------------------------------------------
``one_bit_sum``
    §3.1: n = n_v individuals with Bernoulli(``p``) bits, the victim's bit 1 in the databases
    with x and 0 in the neighbours (X^n_1 against X^n_0); ``documents`` counts independent
    repetitions. The sums are computed by SecureSum among the scenario's parties (party 0
    holds the victim; one call sums every sample of a size at once). The metric ``exact_ks``
    is the closed form max_k B(k; n − 1, p), which the mean KS statistic estimates.
``pd_nmf``
    §3.4.1: M = 2, the victim's database and a fixed adversary database of ``adversary_size``
    documents; RRI-NMF (topic form) from a fixed public T0 for ``iterations`` sweeps on both.
    The observable is the final T and the victim's topic weights w²_t = ‖W^(v)_:t‖²; the
    statistic is the document-weighted topic weights (digest item 28).
``pd_svd`` / ``sigma_revealing_svd``
    §3.4.2: block power iteration from a fixed public V0 for ``iterations`` sweeps; the
    observable is V_k, plus Σ for the Σ-revealing SVD. Six statistics (W and D families).

The mechanisms run their *centralized references* (RRI-NMF, block power iteration): PD-NMF and
PD-SVD reproduce them exactly (Theorem 2 and claim C7, tested in ``tests/algorithms``), so the
observables are the same and thousands of sample runs cost seconds instead of simulations.
The one-bit sum, whose observable is the protocol's output itself, runs through SecureSum.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
import scipy.sparse as sp

from algorithms.nmf.pd_nmf import pd_nmf
from algorithms.nmf.rri import rri_nmf
from algorithms.nmf.rri_steps import RRIParams
from algorithms.svd.power_iteration import block_power_iteration, orthonormalize
from parties.ksdp import (
    estimated_sigma2,
    measure,
    one_bit_sum_ks,
    svd_statistics,
    topic_weight_statistic,
)
from parties.party import site_parties
from protocols import seeds
from protocols.errors import ScenarioError
from protocols.secure_sum import secure_sum_field
from sim import plots
from sim.audited_runs import ReferenceRun, RevealingRun
from sim.console import table
from sim.entry import (
    NUMBA_BYTES,
    NUMBA_S,
    AlgorithmRun,
    EstimateInput,
    RunInput,
    Workload,
)
from sim.privacy import AuditTarget


def _one_bit_sums(inp: RunInput, n: int, bits: np.ndarray,
                  audits: dict[str, Any]) -> np.ndarray:
    """Σ bits of every sample (rows of ``bits``, shape (samples, n)) through one SecureSum.

    The n individuals are split over the M parties in contiguous blocks (party 0 holds the
    victim, column 0); each party inputs its block's count per sample. The run is added to
    ``audits`` (what ``[[audit]]`` examines, :mod:`sim.audited_runs`).
    """

    m = inp.scenario.n_parties
    blocks = np.array_split(np.arange(n), m)
    field = inp.simulation.field
    counts = [field.elements(bits[:, b].sum(axis=1).astype(np.int64)) for b in blocks]
    parties = site_parties(lambda ctx, x: secure_sum_field(ctx, x, "prg", label="bits"),
                           [{"x": c} for c in counts])
    result = inp.simulation.run(parties, seed=inp.seed)
    audits[f"one_bit_sum n_v={n}"] = AuditTarget(
        tuple(parties), "secure_sum", "prg",
        field_program=lambda ctx, x: secure_sum_field(ctx, x, "prg", label="bits"),
        field_inputs=tuple(counts))
    return np.asarray(result.outputs[0]).astype(np.int64)


def _run_one_bit_sum(inp: RunInput, rng: np.random.Generator,
                     audits: dict[str, Any]) -> dict[str, Any]:
    """Every size: ``documents`` independent repetitions of Algorithm 11 (one victim each)."""

    p, t, reps = inp.params["p"], inp.params["samples"], inp.params["documents"]
    sizes = inp.params["party_sizes"]
    rows = []
    for i, n in enumerate(sizes):
        bits = (rng.random((reps, 2 * t, n)) < p).astype(np.int64)
        bits[:, :t, 0] = 1  # X^n_1: the victim's bit is 1
        bits[:, t:, 0] = 0  # X^n_0
        sums = _one_bit_sums(inp, n, bits.reshape(reps * 2 * t, n), audits).reshape(reps, 2 * t)
        found = [measure({"sum": s[:t]}, {"sum": s[t:]}) for s in sums]
        rows.append({"party_size": n, "pi": [r.pi for r in found],
                     "ks": [r.ks_statistics["sum"] for r in found],
                     "exact_ks": one_bit_sum_ks(n, p)})
        if inp.progress is not None:
            inp.progress("ksdp", i + 1, len(sizes))
    return {"one_bit_sum": rows}


def _observables(mechanism: str, X: np.ndarray, n_v: int, start: np.ndarray,
                 params: dict[str, Any]) -> Any:
    if mechanism == "pd_nmf":
        fit = rri_nmf(X, start.shape[0], T0=start, max_iter=params["iterations"], tol=0.0,
                      params=RRIParams(form="topic"))
        return fit.T, np.sum(fit.W[:n_v] ** 2, axis=0)
    V, _ = block_power_iteration(X, start, params["iterations"])
    if mechanism == "sigma_revealing_svd":
        return V, np.sum((X @ V) ** 2, axis=0)
    return V, estimated_sigma2(X[n_v:], V, n_v)


def _statistics(mechanism: str, observable: Any, x: np.ndarray) -> dict[str, float]:
    if mechanism == "pd_nmf":
        T, w2 = observable
        return {"topic_weights": topic_weight_statistic(x, T, w2)}
    V, sigma2 = observable
    return svd_statistics(x, V, sigma2)


def _databases(
    corpus: np.ndarray, x: np.ndarray, others: np.ndarray, n_v: int, t: int, simulator: str,
    rng: np.random.Generator,
) -> list[tuple[str, np.ndarray]]:
    """t victim databases with x and t without, as ("with" | "without", rows) pairs.

    ``resample``: the databases without x are n_v fresh random documents (§3.4's simulator).
    ``swap``: each database without x is one with x, x swapped for a random other document.
    """

    out = []
    for _ in range(t):
        picked = rng.choice(others, n_v, replace=False)
        out.append(("with", np.vstack([x[None, :], corpus[picked[:-1]]])))
        if simulator == "swap":
            out.append(("without", corpus[picked]))
    if simulator == "resample":
        out += [("without", corpus[rng.choice(others, n_v, replace=False)]) for _ in range(t)]
    return out


def _run_documents(inp: RunInput, rng: np.random.Generator,
                   audit_runs: dict[str, Any]) -> dict[str, Any]:
    params = inp.params
    corpus = inp.data.toarray() if sp.issparse(inp.data) else np.asarray(inp.data, dtype=float)
    n_docs, d = corpus.shape
    sizes, t, n_x = params["party_sizes"], params["samples"], params["documents"]
    n_a, k = params["adversary_size"], params["k"]
    needed = n_x + n_a + max(sizes)
    if n_docs < needed:
        raise ScenarioError(
            f"data.rows = {n_docs}: the ksdp experiment needs documents + adversary_size + "
            f"max(party_sizes) = {needed} documents; raise data.rows or lower those")
    if not 1 <= k <= d:
        raise ScenarioError(f"algorithm.k = {k} must lie in 1..{d} (the corpus's columns)")
    order = rng.permutation(n_docs)
    victims, adversary, pool = order[:n_x], order[n_x:n_x + n_a], order[n_x + n_a:]
    X_adv = corpus[adversary]
    T0 = rng.uniform(0.0, 1.0, size=(k, d))
    T0 /= T0.sum(axis=1, keepdims=True)
    V0 = orthonormalize(rng.normal(0.0, 1.0, size=(d, k)))
    starts = {"pd_nmf": T0, "pd_svd": V0, "sigma_revealing_svd": V0}
    mechanisms = params["mechanism"]
    out: dict[str, list[dict[str, Any]]] = {m: [] for m in mechanisms}
    total, done = len(sizes) * n_x, 0
    for n_v in sizes:
        results: dict[str, list] = {m: [] for m in mechanisms}
        for j, v in enumerate(victims):
            x = corpus[v]
            others = np.concatenate([victims[:j], victims[j + 1:], pool])
            samples: dict[str, dict[str, list[dict[str, float]]]] = {
                m: {"with": [], "without": []} for m in mechanisms}
            for side, rows in _databases(corpus, x, others, n_v, t, params["simulator"], rng):
                X = np.vstack([rows, X_adv])
                if not audit_runs:
                    audit_runs.update(_document_audits(mechanisms, rows, X_adv, starts, params))
                for m in mechanisms:
                    obs = _observables(m, X, n_v, starts[m], params)
                    samples[m][side].append(_statistics(m, obs, x))
            for m in mechanisms:
                names = list(samples[m]["with"][0])
                results[m].append(measure(
                    {s: [r[s] for r in samples[m]["with"]] for s in names},
                    {s: [r[s] for r in samples[m]["without"]] for s in names}))
            done += 1
            if inp.progress is not None:
                inp.progress("ksdp", done, total)
        for m in mechanisms:
            out[m].append({
                "party_size": n_v, "pi": [r.pi for r in results[m]],
                "ks": [r.ks_statistics[r.weakest] for r in results[m]],
                "weakest": [r.weakest for r in results[m]]})
    return out


def _document_audits(mechanisms: Any, victim: np.ndarray, adversary: np.ndarray,
                     starts: dict[str, np.ndarray], params: dict[str, Any]) -> dict[str, Any]:
    """What ``[[audit]]`` examines of the document mechanisms (:mod:`sim.audited_runs`), on the
    first sampled database: ``pd_nmf`` as PD-NMF between the victim (party 0) and the
    adversary (party 1) from the same public T0, judged by SecureSum; the Σ-revealing SVD
    reveals Σ by design; ``pd_svd`` runs its centralized reference here (PD-SVD needs
    GF(2^127 − 1), audited by the ``pd_svd`` entry)."""

    out: dict[str, Any] = {}
    for m in mechanisms:
        if m == "pd_nmf":
            program = partial(pd_nmf, k=starts[m].shape[0], sweeps=params["iterations"],
                              params=RRIParams(form="topic"), T0=starts[m])
            out[m] = AuditTarget(tuple(site_parties(program, [{"X": victim}, {"X": adversary}])),
                                 "secure_sum", "prg")
        elif m == "sigma_revealing_svd":
            out[m] = RevealingRun("Σ (the singular values) besides V_k", "the Σ-revealing SVD")
        else:
            out[m] = ReferenceRun("PD-SVD", "the pd_svd entry (scenarios/pd_svd.toml)")
    return out


def run(inp: RunInput) -> AlgorithmRun:
    rng = seeds.rng(inp.seed, "ksdp")
    mechanisms = inp.params["mechanism"]
    audit_runs: dict[str, Any] = {}  # what [[audit]] examines (sim.audited_runs)
    found = (_run_one_bit_sum(inp, rng, audit_runs) if mechanisms == ("one_bit_sum",)
             else _run_documents(inp, rng, audit_runs))
    sizes = list(inp.params["party_sizes"])
    metrics: dict[str, Any] = {"party_sizes": sizes, "mechanisms": {}}
    outputs: dict[str, np.ndarray] = {"party_sizes": np.array(sizes)}
    rows = []
    for m, per_size in found.items():
        entry = {
            "pi": [float(np.mean(r["pi"])) for r in per_size],
            "pi_min": [float(np.min(r["pi"])) for r in per_size],
            "pi_std": [float(np.std(r["pi"])) for r in per_size],
            "ks_statistic": [float(np.mean(r["ks"])) for r in per_size],
        }
        if m == "one_bit_sum":
            entry["exact_ks"] = [r["exact_ks"] for r in per_size]
        else:
            entry["weakest_statistic"] = [max(set(r["weakest"]), key=r["weakest"].count)
                                          for r in per_size]
        metrics["mechanisms"][m] = entry
        key = "p_values" if len(found) == 1 else f"p_values_{m}"
        outputs[key] = np.array([r["pi"] for r in per_size])
        for i, n in enumerate(sizes):
            rows.append([m, n, f"{entry['pi'][i]:.3g}", f"{entry['pi_min'][i]:.3g}",
                         f"{entry['ks_statistic'][i]:.3g}",
                         f"{entry['exact_ks'][i]:.4f}" if "exact_ks" in entry else "—"])
    if len(found) == 1:
        only = next(iter(metrics["mechanisms"].values()))
        metrics["pi"], metrics["ks_statistic"] = only["pi"], only["ks_statistic"]
    curves = {m: e["pi"] for m, e in metrics["mechanisms"].items()}
    title = f"π-KSDP ({inp.params['samples']} samples per side)"
    return AlgorithmRun(
        result=None, outputs=outputs, metrics=metrics,
        audit_runs=audit_runs,
        plots={"ksdp_p_values": lambda: plots.sweep(
            sizes, curves, "victim database size n_v", "mean π (min p-value over statistics)",
            title, logx=max(sizes) >= 20 * min(sizes), reference={"p = 0.05": 0.05})},
        tables=[table(["mechanism", "n_v", "mean π", "min π", "mean KS", "exact KS"], rows,
                      "KS distributional privacy against party size")],
    )


KS_S = 0.6
"""Importing SciPy's statistics for the KS tests (Algorithm 11's π), measured ≈ 0.6 s."""
RRI_SWEEP_S = 2e-4
"""The Python work of one RRI-NMF sweep on a small database beyond its flops (its k rank-one
updates), ≈ 0.2 ms measured on ``ksdp_pd_nmf``."""


def estimate(inp: EstimateInput) -> Workload:
    """The one-bit sum: per party size one SecureSum (PRG) of ``documents × 2·samples`` counts,
    the bits drawn as floats, compared and cast (three arrays of that many × n at the peak).
    The other mechanisms: ``documents × 2·samples`` sampled databases per size, each mechanism
    run on it centrally — ``iterations`` sweeps of ≈ 4·rows·d·k flops on the n_v + adversary
    rows (the Python work of a sweep on a small database costs about as much)."""
    p = inp.params
    sizes, t, reps = p["party_sizes"], p["samples"], p["documents"]
    mechanisms = (p["mechanism"],) if isinstance(p["mechanism"], str) else tuple(p["mechanism"])
    if mechanisms == ("one_bit_sum",):
        m, draws = inp.n_parties, reps * 2 * t
        return Workload(messages=len(sizes) * m * (m - 1),
                        elements=len(sizes) * m * (m - 1) * draws,
                        flops=20.0 * draws * sum(sizes),  # draw, compare, cast, sum a bit
                        working_bytes=3 * 8 * draws * max(sizes)
                        + (NUMBA_BYTES if draws >= 1024 else 0),
                        seconds=KS_S + (NUMBA_S if draws >= 1024 else 0.0),
                        basis="SecureSum's declared cost per party size; the sampled bits")
    d, k = inp.n_cols, p["k"]
    runs = len(sizes) * reps * 2 * t * len(mechanisms)
    nmf_runs = runs // len(mechanisms) if "pd_nmf" in mechanisms else 0
    rows = sum(n + p["adversary_size"] for n in sizes) / len(sizes)
    return Workload(messages=0, elements=0,
                    flops=4.0 * runs * p["iterations"] * rows * d * k,
                    seconds=RRI_SWEEP_S * nmf_runs * p["iterations"],
                    working_bytes=8 * 2 * t * (max(sizes) + p["adversary_size"]) * d,
                    basis=f"{runs:,} mechanism runs of {p['iterations']} sweeps")


