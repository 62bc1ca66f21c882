"""Catalogue entries ``pd_nmf`` and ``rri_nmf`` (thesis seed 001, §2.2, Algorithms 2, 7, 8).

``pd_nmf`` runs PD-NMF among the scenario's parties on the simulator; ``rri_nmf`` runs the
centralized reference on the pooled data. Both share the scenario keys below. For ``pd_nmf``
the report's metrics hold the objective after every sweep (an evaluation by the simulator, not
part of the protocol) and ``max_abs_diff_vs_centralized``: the largest difference between the
parties' T and centralized RRI-NMF run on the pooled X from the same T0 (Theorem 2).

Scenario keys (``[algorithm]``): ``k``, ``iterations`` (sweeps of PD-NMF-Iter), ``form``
("topic" | "plain"), ``variant`` ("prg" | "explicit" |
"prg_two_share", the thesis's two-share PRG form), ``init`` ("random" | "random_2x" |
"nndsvd" | "pd_nmf_init" | "pd_svd" | {path = "T0.npy"}), ``l1_w``, ``l2_w``, ``l1_t``,
``l2_t``, ``loss`` ("auto" | "full" | "observed"), ``init_iterations`` (sweeps of step 9 of
PD-NMF-Init; default ``iterations``), ``local_iterations`` (cap on the local RRI-NMF of step 2).

``random`` draws T0 with U[0,1] entries (the thesis's baseline) and divides every row by its
sum. From W = 0 without regularisers, RRI's iterates of WT do not depend on the scale of T0's
rows; the scale only splits the product between W and T, and an unnormalised start in a wide
matrix (large d) leaves W tiny, where fixed-point encoding loses relative precision (see the
precision note of :mod:`algorithms.nmf.pd_nmf`).

``loss = "auto"`` is resolved once, on the pooled data: the observed-entries loss if any entry
is NaN, else the full loss; every party runs with that loss, so that a party whose rows happen
to have no missing entry sums statistics of the same length (2d) as the others.

The workload (:func:`nmf_workload`) is PD-NMF's declared cost: PD-NMF-Init's SecureSum of the
k×d random topics and its ``init_iterations`` sweeps of k SecureSums of d + 1 elements, then
``iterations`` sweeps of k SecureSums of the T statistic (d + 1 or 2d elements), plus the
local arithmetic of the sweeps and of the centralized reference.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from algorithms import data as data_io
from algorithms.nmf.dp_pd_nmf import DpSettings
from algorithms.nmf.nndsvd import nndsvd
from algorithms.nmf.objective import objective
from algorithms.nmf.pd_nmf import (
    InitSettings,
    SvdInitSettings,
    declared_sweep_elements,
    normalize_rows,
    pd_nmf,
    pd_nmf_iter_aggregator,
    total_objective,
)
from algorithms.nmf.row_blocks import as_row_block, zero_filled
from algorithms.nmf.rri import rri_sweep
from algorithms.nmf.rri_steps import RRIParams
from algorithms.nmf.topic_quality import topic_recovery
from parties.party import Party, site_parties
from protocols import seeds
from protocols.errors import FieldOverflowError, InputError, PartyInputError, ScenarioError
from protocols.normed_secure_sum import PRESETS
from protocols.secagg import AGGREGATOR, variant_of
from protocols.secagg import Config as SecAggConfig
from protocols.secagg import check_config as check_secagg
from sim import plots
from sim.audited_runs import RevealingRun
from sim.entry import (
    AlgorithmRun,
    EstimateInput,
    RunInput,
    Workload,
)
from sim.experiments.nmf.sweep_cost import sweep_flops as cost_of_sweep
from sim.experiments.secagg import FIELD_REASON as SECAGG_FIELD_REASON
from sim.experiments.secagg import secagg_workload
from sim.experiments.secure_sum import secure_sum_workload
from sim.experiments.svd.normed_secure_sum import layout_for, with_dealer
from sim.privacy import AuditTarget
from sim.simulation import Result


@dataclass(frozen=True)
class NmfSetup:
    """The validated NMF settings of a scenario, with the data's shape checked."""

    k: int
    sweeps: int
    params: RRIParams
    variant: str
    init: Any
    loss: str
    init_settings: InitSettings
    svd_init: SvdInitSettings | None = None

    @classmethod
    def from_params(cls, p: dict[str, Any], X: Any) -> NmfSetup:
        """Validate the NMF keys against the data ``X`` (its shape and missing entries).

        ``loss = "auto"`` becomes ``"observed"`` if the pooled X holds NaN, else ``"full"``,
        so that every party runs with the same loss.
        """

        n, d = X.shape
        k = p["k"]
        if k > min(n, d):
            raise ScenarioError(
                f"algorithm.k = {k} must be ≤ min(n, d) = {min(n, d)} for data of shape {X.shape}"
            )
        try:
            params = RRIParams(form=p["form"], l1_w=p["l1_w"], l2_w=p["l2_w"], l1_t=p["l1_t"],
                               l2_t=p["l2_t"])
        except InputError as exc:
            raise ScenarioError(f"[algorithm]: {exc}") from exc
        missing = not sp.issparse(X) and bool(np.isnan(X).any())
        if missing and p["loss"] == "full":
            raise ScenarioError(
                "algorithm.loss = 'full' but the data has unobserved entries (NaN); use "
                "loss = 'auto' or 'observed', or fill them"
            )
        if (missing or p["loss"] == "observed") and min(p["l2_w"], p["l2_t"]) < 0:
            raise ScenarioError(
                f"algorithm.l2_w = {p['l2_w']} / l2_t = {p['l2_t']}: negative ℓ2 is not "
                "supported with the observed-entries loss (missing ratings); use values ≥ 0"
            )
        if p["init"] == "pd_nmf_init" and p["l2_t"] < 0:
            raise ScenarioError(
                f"algorithm.l2_t = {p['l2_t']}: PD-NMF-Init's Theorem 1 weights need ℓ^T_2 ≥ 0; "
                "choose another init or l2_t ≥ 0"
            )
        sweeps = p["iterations"] * (2 if p["init"] == "random_2x" else 1)
        settings = InitSettings(sweeps=p["init_iterations"] or p["iterations"],
                                local_max_iter=p["local_iterations"])
        loss = p["loss"] if p["loss"] != "auto" else ("observed" if missing else "full")
        svd_init = None
        if p["init"] == "pd_svd":
            svd_init = SvdInitSettings(iterations=p.get("svd_iterations", 20),
                                       variant=p.get("svd_variant", "secure_sum"))
        return cls(k, sweeps, params, p["variant"], p["init"], loss, settings, svd_init)


def public_start(setup: NmfSetup, X: Any, seed: int, base_dir: Path,
                 init: Any = None) -> np.ndarray | None:
    """The public T0 of the non-private initialisations (None for ``pd_nmf_init``)."""

    init = setup.init if init is None else init
    d = X.shape[1]
    if isinstance(init, dict):
        path = (base_dir / init["path"]).resolve()
        where = f"algorithm.init T0 file {str(path)!r}"
        if not path.is_file():
            raise InputError(f"{where} does not exist (paths are relative to the scenario file)")
        T0 = data_io.load_matrix(path)
        if sp.issparse(T0):
            T0 = T0.toarray()
        if T0.shape != (setup.k, d):
            raise InputError(f"{where} has shape {T0.shape}; it must be (k, d) = ({setup.k}, {d})")
        T0 = np.asarray(T0, dtype=np.float64)
        if not np.all(np.isfinite(T0)):
            raise InputError(f"{where} holds NaN or infinite entries; topics must be finite")
        if T0.min() < 0:
            r, c = np.unravel_index(int(np.argmin(T0)), T0.shape)
            raise InputError(
                f"{where}: row {r}, column {c} holds {T0[r, c]!r}; topics must be non-negative"
            )
        return T0
    if init in ("random", "random_2x"):
        rng = seeds.rng(seed, "pd_nmf.init")
        return normalize_rows(rng.uniform(0.0, 1.0, size=(setup.k, d)))
    if init == "nndsvd":
        return nndsvd(zero_filled(X), setup.k)[1]
    return None


def centralized_sweeps(X: Any, T0: np.ndarray, sweeps: int, setup: NmfSetup,
                       callback: Callable[[np.ndarray, np.ndarray], None] | None = None,
                       ) -> tuple[np.ndarray, np.ndarray]:
    """Centralized RRI-NMF (Algorithm 2) from T0 with W = 0, for a fixed number of sweeps."""

    block = as_row_block(X, setup.loss)  # type: ignore[arg-type]
    W = np.zeros((X.shape[0], setup.k))
    T = np.array(T0, dtype=np.float64, copy=True)
    for _ in range(sweeps):
        W, T = rri_sweep(block, W, T, setup.params)
        if callback is not None:
            callback(W, T)
    return W, T


def dp_settings(params: Mapping[str, Any]) -> DpSettings | None:
    """DP-PD-NMF's settings from the ``dp_*`` keys (None when ``dp_epsilon`` is left out)."""
    if params.get("dp_epsilon") is None:
        return None
    return DpSettings(float(params["dp_epsilon"]), float(params["dp_delta"]),
                      float(params["dp_clip"]))


def pd_nmf_parties(inp: RunInput, setup: NmfSetup, T0: np.ndarray | None) -> list[Party]:
    """The parties of a PD-NMF run: party m runs PD-NMF on its shard (and a dealer, for the
    PD-SVD start on NormedSecureSum). With ``dp_epsilon`` the sweeps are DP-PD-NMF's: the
    SecureSums' declared inputs are the noisy statistics."""

    dp = dp_settings(inp.params)
    parties = site_parties(
        lambda ctx, X: pd_nmf(ctx, X, setup.k, sweeps=setup.sweeps, params=setup.params,
                              variant=setup.variant, loss=setup.loss, T0=T0,
                              init_settings=setup.init_settings, svd_init=setup.svd_init,
                              dp=dp),
        [{"X": shard} for shard in inp.shards],
    )
    if T0 is None and setup.svd_init is not None and setup.svd_init.variant == "normed":

        nss = PRESETS["p127-default"]
        d = inp.shards[0].shape[1]
        layout_for(nss, inp.simulation.field.p, len(inp.shards), d, "normed")
        parties = with_dealer(parties, [(setup.k, d)] * setup.svd_init.iterations, "normed",
                              nss)
    return parties


def run_pd_nmf(inp: RunInput, setup: NmfSetup, T0: np.ndarray | None) -> tuple[Result, list]:
    """Simulate PD-NMF on the scenario's shards; returns the result and each party's model.

    Raises
    ------
    InputError
        When a SecureSum input overflowed the field because the unregularised
        observed-entries sweeps diverged (:func:`divergence_reason`); the message names the
        cause and the fix. Any other refused input is re-raised as it came.
    """
    try:
        result = inp.simulation.run(pd_nmf_parties(inp, setup, T0), seed=inp.seed)
    except PartyInputError as refused:
        reason = (divergence_reason(setup, inp.data)
                  if isinstance(refused.__cause__, FieldOverflowError) else None)
        if reason is None:
            raise
        raise InputError(f"{refused}. {reason}") from refused
    return result, [result.outputs[m] for m in result.sites]


def divergence_reason(setup: NmfSetup, X: Any) -> str | None:
    """Why PD-NMF's statistics outgrew the field, when the data explain it (else None).

    With the observed-entries loss and no ℓ2 regulariser, the update of a user's row of W (an
    item's column of T) is a least-squares fit of k numbers to that user's observed ratings.
    A user (item) with fewer than k ratings leaves it underdetermined, and RRI's rank-one
    steps then let W and T grow without bound until a SecureSum input exceeds the field's
    range (measured: ML-1M-shaped ratings at 4.5 % density, k = 50, overflow 2^61 − 1 at 24
    fractional bits within 15 sweeps from every start; at ML-1M's ratings per user and per
    item — 165 and 270 — they do not). The start's scale is not the cause: from W = 0 the
    first sweep's product WT does not depend on it (module docstring).
    """
    if setup.loss != "observed" or min(setup.params.l2_w, setup.params.l2_t) > 0:
        return None
    if sp.issparse(X):
        return None
    observed = ~np.isnan(np.asarray(X, dtype=np.float64))
    per_user, per_item = observed.sum(axis=1), observed.sum(axis=0)
    thin_users, thin_items = int((per_user < setup.k).sum()), int((per_item < setup.k).sum())
    if not thin_users and not thin_items:
        return None
    return ("The cause is not the field's size: PD-NMF diverged: with the observed-entries "
            f"loss and l2_w = {setup.params.l2_w:g}, l2_t = {setup.params.l2_t:g}, "
            f"{thin_users} users and {thin_items} items hold "
            f"fewer than k = {setup.k} ratings (as few as {int(per_user.min())} and "
            f"{int(per_item.min())}), so their least-squares steps are underdetermined and the "
            "factors grow until they overflow the field; set algorithm.l2_w and algorithm.l2_t "
            "> 0, lower algorithm.k, or use data with at least k ratings per user and item")
def run_entry(inp: RunInput) -> AlgorithmRun:
    setup = NmfSetup.from_params(inp.params, inp.data)
    T0 = public_start(setup, inp.data, inp.seed, inp.scenario.base_dir)
    if inp.params["secure_sum"] == "secagg":
        if dp_settings(inp.params) is not None:
            raise ScenarioError("algorithm.dp_epsilon (DP-PD-NMF) needs secure_sum = "
                                "'secure_sum'; SecAgg's sums are not noised")
        return _run_pd_nmf_secagg(inp, setup, T0)
    result, models = run_pd_nmf(inp, setup, T0)
    T = models[0].T
    W = np.vstack([m.W for m in models])
    history = total_objective(models)
    start = models[0].T_start
    W_c, T_c = centralized_sweeps(inp.data, start, setup.sweeps, setup)
    n, d = inp.data.shape
    by_sender = result.ledger.elements_by_sender(protocol="secure_sum", phase="iter")
    sent = [by_sender.get(m, 0) for m in result.sites]
    metrics: dict[str, Any] = {
        "objective": history[-1] if history else None,
        "objective_history": history,
        "max_abs_diff_vs_centralized": float(np.max(np.abs(T - T_c))),
        "max_rel_diff_vs_centralized": float(np.max(np.abs(T - T_c)) / max(np.max(np.abs(T_c)),
                                                                           1e-300)),
        "max_abs_diff_W_vs_centralized": float(np.max(np.abs(W - W_c))) if W.size else 0.0,
        "same_T_at_every_party": all(np.array_equal(m.T, T) for m in models),
        "elements_sent_per_party_per_sweep": sent[0] / setup.sweeps if setup.sweeps else 0,
        "declared_elements_sent_per_party_per_sweep": declared_sweep_elements(
            setup.variant, len(models), d, setup.k, setup.loss),
        "n": n, "d": d, "k": setup.k, "sweeps": setup.sweeps,
    }
    if len(set(sent)) != 1:
        metrics["elements_sent_per_party_iter"] = sent
    dp = dp_settings(inp.params)
    if dp is not None:
        metrics["dp_noise_std_total"] = dp.total_std()
        metrics["dp_noise_std_per_party"] = dp.party_std(len(models))
    truth = inp.extras.get("topics")
    if truth is not None and np.shape(truth) == T.shape:
        metrics["topic_recovery_cosine"] = topic_recovery(np.asarray(truth), T)
    outputs = {"T": T, **{f"W_{m}": model.W for m, model in zip(result.sites, models,
                                                                 strict=True)}}
    return AlgorithmRun(
        result=result,
        outputs=outputs,
        metrics=metrics,
        audit_target=AuditTarget(tuple(pd_nmf_parties(inp, setup, T0)), "secure_sum",
                                 setup.variant),
        plots={"objective": lambda: plots.objective({"pd_nmf": history},
                                                   f"PD-NMF, M = {len(models)}, k = {setup.k}")},
        communication_by_phase=True,
    )


CENTRALIZED_REVEALS = RevealingRun("the pooled rows X to the one party that factorises them",
                                   "centralized RRI-NMF (the non-private reference)")
"""What ``[[audit]]`` reports on ``rri_nmf`` (:mod:`sim.audited_runs`): it pools the data."""


def run_rri_entry(inp: RunInput) -> AlgorithmRun:
    setup = NmfSetup.from_params(inp.params, inp.data)
    if setup.init in ("pd_nmf_init", "pd_svd"):
        raise ScenarioError(f"algorithm.init = {setup.init!r} is distributed; rri_nmf takes "
                            "random, random_2x, nndsvd or { path = ... }")
    T0 = public_start(setup, inp.data, inp.seed, inp.scenario.base_dir)
    assert T0 is not None  # every init but pd_nmf_init gives a public T0
    history: list[float] = []
    block = as_row_block(inp.data, setup.loss)  # type: ignore[arg-type]
    W, T = centralized_sweeps(
        inp.data, T0, setup.sweeps, setup,
        callback=lambda W_, T_: history.append(objective(block, W_, T_, setup.params)),
    )
    metrics: dict[str, Any] = {"objective": history[-1], "objective_history": history,
                               "n": inp.data.shape[0], "d": inp.data.shape[1], "k": setup.k}
    truth = inp.extras.get("topics")
    if truth is not None and np.shape(truth) == T.shape:
        metrics["topic_recovery_cosine"] = topic_recovery(np.asarray(truth), T)
    return AlgorithmRun(
        result=None, outputs={"T": T, "W": W}, metrics=metrics,
        plots={"objective": lambda: plots.objective({"rri_nmf": history}, "RRI-NMF")},
        audit_runs={"rri_nmf": CENTRALIZED_REVEALS},
    )


def _run_pd_nmf_secagg(inp: RunInput, setup: NmfSetup, T0: np.ndarray | None) -> AlgorithmRun:
    """PD-NMF-Iter summing through SecAgg, with an aggregator (party M); sites may drop.

    The reference is centralized RRI-NMF sweep by sweep on the rows of the sites that took
    part in that sweep (every aggregation of a sweep had the same survivors), carrying W and
    T over: a drop between sweeps leaves the survivors' model of their own rows.
    """

    if T0 is None:
        raise ScenarioError(f"algorithm.secure_sum = 'secagg' needs a public start; init = "
                            f"{setup.init!r} sums with SecureSum (use random, random_2x, "
                            "nndsvd or a T0 file)")
    m, (n, d) = len(inp.shards), inp.data.shape
    config = check_secagg(SecAggConfig(inp.params["secagg_threshold"] or m // 2 + 1,
                                       timeout_s=inp.params["secagg_timeout_s"]),
                          m, inp.simulation.field.p)
    loss = as_row_block(inp.shards[0], setup.loss).loss  # type: ignore[arg-type]
    parties = [Party(u, _secagg_site(T0, setup, config), {"X": shard})
               for u, shard in enumerate(inp.shards)]
    parties.append(Party(m, _secagg_aggregator(d, setup, loss, config), role=AGGREGATOR))
    result = inp.simulation.run(parties, seed=inp.seed)
    history = result.outputs[m]
    per_sweep = [history[s * setup.k:(s + 1) * setup.k] for s in range(setup.sweeps)]
    survivors = [u for u in range(m) if u in result.outputs]
    bounds = np.cumsum([0, *(shard.shape[0] for shard in inp.shards)])
    W, T = np.zeros((n, setup.k)), np.array(T0, dtype=np.float64)
    for calls in per_sweep:  # the centralized reference, sweep by sweep on who took part
        rows = np.concatenate([np.arange(bounds[u], bounds[u + 1]) for u in calls[0]])
        W[rows], T = rri_sweep(as_row_block(inp.data[rows], loss), W[rows], T,  # type: ignore[arg-type]
                               setup.params)
    T_private = result.outputs[survivors[0]].T
    metrics: dict[str, Any] = {
        "survivors": survivors,
        "dropped": [u for u in range(m) if u not in survivors],
        "sites_per_sweep": [len(calls[0]) for calls in per_sweep],
        "mid_sweep_dropout": any(len(set(calls)) > 1 for calls in per_sweep),
        "max_abs_diff_vs_centralized_survivors": float(np.max(np.abs(T_private - T))),
        "same_T_at_every_survivor": all(np.array_equal(result.outputs[u].T, T_private)
                                        for u in survivors),
        "n": n, "d": d, "k": setup.k, "sweeps": setup.sweeps,
    }
    outputs = {"T": T_private, **{f"W_{u}": result.outputs[u].W for u in survivors}}
    return AlgorithmRun(result=result, outputs=outputs, metrics=metrics,
                        communication_by_phase=True,
                        audit_target=AuditTarget(tuple(parties), "secagg",
                                                 variant_of(config, "affine"),
                                                 faults=inp.scenario.faults, oracle="affine",
                                                 field_reason=SECAGG_FIELD_REASON))


def _secagg_site(T0: np.ndarray, setup: NmfSetup, config: SecAggConfig) -> Any:
    def program(ctx: Any, X: Any) -> Any:
        return pd_nmf(ctx, X, setup.k, sweeps=setup.sweeps, params=setup.params,
                      loss=setup.loss, T0=T0, secagg_config=config)

    return program


def _secagg_aggregator(d: int, setup: NmfSetup, loss: str, config: SecAggConfig) -> Any:
    def program(ctx: Any) -> Any:
        with ctx.in_phase("iter"):
            return (yield from pd_nmf_iter_aggregator(ctx, n_features=d, k=setup.k,
                                                      sweeps=setup.sweeps, loss=loss,
                                                      secagg_config=config))

    return program


def stored_entries(inp: EstimateInput, n: int) -> float | None:
    """The stored entries of ``n`` rows of a sparse X (a share of the loaded file's, in
    proportion to its rows), or None for dense data — every synthetic corpus, topics included,
    arrives as a dense array, whose sweeps run on BLAS over all n·d entries
    (:mod:`sim.experiments.nmf.sweep_cost`)."""
    if inp.stored is None:
        return None
    return float(inp.stored) * n / max(inp.n_rows, 1)


TYPICAL_LOCAL_SWEEPS = 50
"""Sweeps a local RRI-NMF (PD-NMF-Init step 2, the uplift's local models) typically needs to
reach its tolerance (it stops at ``local_iterations`` at the latest); counted for the time
estimate."""


def nmf_workload(inp: EstimateInput, params: dict[str, Any] | None = None,
                 n_rows: int | None = None, *, private: bool = True) -> Workload:
    """PD-NMF's declared cost (or, with ``private=False``, centralized RRI-NMF's arithmetic).

    Parameters
    ----------
    inp : EstimateInput
    params : dict, optional
        The NMF keys (default: ``inp.params``), e.g. with another ``init``.
    n_rows : int, optional
        Rows taking part (default: all of the data).
    private : bool
        PD-NMF among the parties (messages, and the centralized reference the report compares
        with), or the centralized algorithm alone.
    """
    p = inp.params if params is None else params
    n = inp.n_rows if n_rows is None else n_rows
    d = inp.n_cols
    k = min(p["k"], n, d)
    observed = p["loss"] == "observed" or (p["loss"] == "auto" and inp.missing)
    sweeps = p["iterations"] * (2 if p["init"] == "random_2x" else 1)
    stored = stored_entries(inp, n)
    sweep_flops = cost_of_sweep(n, d, k, stored=stored, observed=observed)
    if not private:
        return Workload(flops=sweeps * sweep_flops, working_bytes=8 * k * (n + d),
                        basis="centralized sweeps")
    length = 2 * d if observed else d + 1
    if p.get("secure_sum") == "secagg":  # the sweeps' sums through SecAgg, with an aggregator
        sums = secagg_workload(inp.n_parties, length, inp.scenario.prime, calls=sweeps * k)
        basis = "PD-NMF's sweeps with SecAgg's declared cost per topic"
    else:
        sums = secure_sum_workload(p["variant"], inp.n_parties, length, calls=sweeps * k)
        basis = "PD-NMF's declared SecureSum cost per sweep and topic"
    parties_sweep = cost_of_sweep(n, d, k, stored=stored, observed=observed,
                                  blocks=inp.n_parties)
    work = sums + Workload(flops=sweeps * (parties_sweep + sweep_flops),
                           working_bytes=16 * k * (n + d),
                           audited_length=length)
    if p["init"] == "pd_nmf_init":
        init_sweeps = p["init_iterations"] or p["iterations"]
        local = min(p["local_iterations"], TYPICAL_LOCAL_SWEEPS)
        work = (Workload(audited_length=k * d)  # the first SecureSum: the random topics
                + work + secure_sum_workload(p["variant"], inp.n_parties, k * d)
                + secure_sum_workload(p["variant"], inp.n_parties, d + 1,
                                      calls=init_sweeps * k)
                + Workload(flops=local * parties_sweep))
    return work.described(basis, 1)


def estimate_rri_nmf(inp: EstimateInput) -> Workload:
    return nmf_workload(inp, private=False)


def pd_nmf_roles(params: Mapping[str, Any]) -> tuple[str, ...]:
    """Participants beyond the data holders: SecAgg's aggregator, or the dealer of
    ``init = "pd_svd"`` over NormedSecureSum (the two exclude each other: SecAgg needs a
    public start)."""
    if params.get("secure_sum") == "secagg":
        return ("aggregator",)
    if params.get("init") == "pd_svd" and params.get("svd_variant") == "normed":
        return ("dealer",)
    return ()


