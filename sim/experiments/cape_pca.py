"""Catalogue entries ``cape_pca`` and ``cape_pca_sweep``: capePCA against its baselines
(seed 003, Algorithm 1, §6.1, Figure 2).

Each trial (the paper averages 10) takes the sites' samples — the scenario's shards, or, with
``samples_per_site = N_s``, S·N_s rows drawn at random from the data as the paper does — then
(``preprocess = "center_scale"``, the paper's non-private preprocessing) centres them and divides
them by the largest norm; with ``preprocess = "none"`` every row must already lie in the unit
ball. It then runs:

* capePCA on the simulator (sites, aggregator, noise generator; :mod:`algorithms.cape.pca`),
* the conventional scheme on the simulator (each site adds AG noise for its own N_s),
* pooled AG and local AG (site 0 alone) centrally, and non-private PCA of the pooled samples,

and scores each V by the captured energy q(V) = tr(Vᵀ A_true V): A_true is the generating
covariance of synthetic ``spiked`` data, else the second-moment matrix of the whole
preprocessed data set (§6.1). Metrics ``q_cape``, ``q_pooled_ag``, ``q_conventional``,
``q_local``, ``q_nonprivate`` are means over trials (``*_sd``: their standard deviations;
``*_ratio``: divided by ``q_nonprivate``). Output ``V`` is the first trial's capePCA subspace.

``cape_pca_sweep`` repeats this over one swept key (``sweep`` = "epsilon" | "delta" |
"samples_per_site", ``values``), the panels of Figure 2, and plots q against it. The paper's
orderings (capePCA ≈ pooled AG ≥ conventional ≥ local; capePCA → non-private as ε or N_s grow)
are asserted by the tests.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

from protocols.errors import ScenarioError
from sim.console import table
from sim.entry import Algorithm, AlgorithmRun, Param, RunInput, choice, integer
from sim.experiments.cape_setup import (
    ACCOUNTING_HEADERS,
    ORDERS,
    PRIVACY_PARAMS,
    accounting,
    accounting_rows,
    cape_parties,
    check_list,
    trial_seed,
)

if TYPE_CHECKING:
    import numpy as np

    from sim.simulation import Result

METHODS = ("cape", "pooled_ag", "conventional", "local", "nonprivate")
SWEEPABLE = ("epsilon", "delta", "samples_per_site")
PREPROCESS = ("center_scale", "none")

PARAMS: dict[str, Param] = {
    "k": Param(5, integer(low=1), "number of principal directions K ≤ D"),
    **PRIVACY_PARAMS,
    "trials": Param(10, integer(low=1), "independent runs averaged"),
    "samples_per_site": Param(0, integer(low=0),
                              "N_s rows per site drawn at random each trial (0: the shards)"),
    "sensitivity": Param("paper", choice("paper", "replace_one"), "Δ = 1/N_s or √2/N_s"),
    "order": Param("eigenvalue", choice(*ORDERS), "eigenvector order"),
    "preprocess": Param("center_scale", choice(*PREPROCESS),
                        "centre and divide by the largest norm (non-private, as the paper)"),
}


def _trial_data(inp: RunInput, p: dict[str, Any], rng: np.random.Generator) -> list[np.ndarray]:
    """The sites' samples for one trial, preprocessed."""

    import numpy as np
    import scipy.sparse as sp

    from algorithms.cape.moments import check_unit_ball

    S = len(inp.shards)
    pool = inp.data.toarray() if sp.issparse(inp.data) else np.asarray(inp.data, dtype=float)
    if p["samples_per_site"]:
        n = S * p["samples_per_site"]
        if n > len(pool):
            raise ScenarioError(
                f"algorithm.samples_per_site = {p['samples_per_site']} needs {n} rows for "
                f"{S} sites; the data has {len(pool)}"
            )
        X = pool[rng.choice(len(pool), n, replace=False)]
        bounds = np.arange(0, n + 1, p["samples_per_site"])
    else:
        X = pool
        bounds = np.cumsum([0, *(s.shape[0] for s in inp.shards)])
    if p["preprocess"] == "center_scale":
        X = X - X.mean(axis=0)
        X = X / max(float(np.linalg.norm(X, axis=1).max()), 1e-300)
    shards = [X[a:b] for a, b in itertools.pairwise(bounds)]
    return [check_unit_ball(s, f"party {m}'s rows", 1.0) for m, s in enumerate(shards)]


def _a_true(inp: RunInput, p: dict[str, Any]) -> np.ndarray:
    import numpy as np
    import scipy.sparse as sp

    from algorithms.cape.pca import second_moment

    truth = inp.extras.get("covariance")
    if truth is not None:
        return np.asarray(truth)
    pool = inp.data.toarray() if sp.issparse(inp.data) else np.asarray(inp.data, dtype=float)
    if p["preprocess"] == "center_scale":
        pool = pool - pool.mean(axis=0)
        pool = pool / max(float(np.linalg.norm(pool, axis=1).max()), 1e-300)
    return second_moment(pool)


def _simulate(inp: RunInput, shards: list[np.ndarray], p: dict[str, Any], scheme: str,
              seed: int) -> tuple[Result, np.ndarray]:
    from algorithms.cape.pca import (
        cape_pca_aggregator,
        cape_pca_noise_generator,
        cape_pca_site,
        pca_plan,
    )

    D = shards[0].shape[1]
    plan = pca_plan([len(s) for s in shards], p["epsilon"], p["delta"], scheme,
                    p["sensitivity"], p["aggregator_noise"])
    parties = cape_parties(
        cape_pca_site, [{"X": s, "plan": plan, "noise": p["noise"]} for s in shards],
        (cape_pca_aggregator, {"plan": plan, "dim": D, "k": p["k"], "noise": p["noise"],
                               "order": p["order"]}),
        (cape_pca_noise_generator, {"plan": plan, "dim": D, "noise": p["noise"]})
        if plan.uses_generator else None,
    )
    result = inp.simulation.run(parties, seed=seed)
    return result, result.outputs[len(shards)]


def pca_point(inp: RunInput, p: dict[str, Any], stage: str = "trials") -> dict[str, Any]:
    """Every method's q over ``p["trials"]`` trials at one setting of the keys."""

    import numpy as np

    from algorithms.cape.pca import (
        analyze_gauss,
        captured_energy,
        check_rank,
        second_moment,
        top_eigenvectors,
    )

    A_true = _a_true(inp, p)
    check_rank(p["k"], A_true.shape[0])
    q: dict[str, list[float]] = {m: [] for m in METHODS}
    first: tuple[Result, np.ndarray] | None = None
    for trial in range(p["trials"]):
        seed = trial_seed(inp.seed, trial)
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(7,)))
        shards = _trial_data(inp, p, rng)
        pooled = np.vstack(shards)
        result, V = _simulate(inp, shards, p, "cape", seed)
        if first is None:
            first = (result, V)
        _, V_conv = _simulate(inp, shards, p, "conventional", seed)
        subspaces = {
            "cape": V,
            "pooled_ag": analyze_gauss(pooled, p["k"], p["epsilon"], p["delta"], rng,
                                       p["sensitivity"], p["order"]),
            "conventional": V_conv,
            "local": analyze_gauss(shards[0], p["k"], p["epsilon"], p["delta"], rng,
                                   p["sensitivity"], p["order"]),
            "nonprivate": top_eigenvectors(second_moment(pooled), p["k"]),
        }
        for m, Vm in subspaces.items():
            q[m].append(captured_energy(Vm, A_true))
        if inp.progress is not None:
            inp.progress(stage, trial + 1, p["trials"])
    assert first is not None  # trials ≥ 1
    return {"q": {m: np.array(v) for m, v in q.items()}, "result": first[0], "V": first[1],
            "sizes": [len(s) for s in shards], "dim": A_true.shape[0]}


def _accounting(p: dict[str, Any], sizes: list[int]) -> dict[str, Any]:
    import numpy as np

    from algorithms.cape.pca import pca_plan, sensitivity
    from protocols.accounting import Release

    plan = pca_plan(sizes, p["epsilon"], p["delta"], "cape", p["sensitivity"],
                    p["aggregator_noise"])
    s = int(np.argmin(sizes))
    site = Release("site release: A_s", float(np.sqrt(plan.release_variance()[s])),
                   sensitivity(sizes[s], p["sensitivity"]), p["epsilon"], p["delta"])
    n = int(sum(sizes))
    pooled = Release("aggregate: Â", float(np.sqrt(plan.aggregate_variance())),
                     sensitivity(n, p["sensitivity"]), p["epsilon"], p["delta"])
    return accounting([site], [pooled])


def _metrics(q: dict[str, np.ndarray]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for m in METHODS:
        out[f"q_{m}"] = float(q[m].mean())
    base = out["q_nonprivate"]
    for m in METHODS:
        out[f"q_{m}_sd"] = float(q[m].std(ddof=1)) if len(q[m]) > 1 else 0.0
        out[f"q_{m}_ratio"] = out[f"q_{m}"] / base if base else float("nan")
    return out


def _run(inp: RunInput) -> AlgorithmRun:
    from algorithms.cape.symmetric import matrix_size

    p = inp.params
    point = pca_point(inp, p)
    metrics = _metrics(point["q"])
    D = point["dim"]
    result: Result = point["result"]
    site_sent = [sum(r.elements for r in result.ledger.select(protocol="cape") if r.sender == s)
                 for s in range(len(point["sizes"]))]
    metrics.update({
        "elements_sent_per_site": site_sent[0],
        "declared_elements_sent_per_site": matrix_size(D),
        "dimension": D, "k": p["k"], "site_sizes": point["sizes"],
        "accounting": _accounting(p, point["sizes"]),
    })
    rows = [[m, metrics[f"q_{m}"], metrics[f"q_{m}_sd"], metrics[f"q_{m}_ratio"]]
            for m in METHODS]
    return AlgorithmRun(
        result=result,
        outputs={"V": point["V"], **{f"q_{m}": v for m, v in point["q"].items()}},
        metrics=metrics,
        tables=[table(["method", "q (mean)", "sd", "q / q_nonprivate"], rows,
                      f"captured energy over {p['trials']} trials (K = {p['k']}, D = {D})"),
                table(ACCOUNTING_HEADERS, accounting_rows(metrics["accounting"]),
                      "privacy accounting")],
    )


def _check_values(name: str, value: Any) -> list[Any]:
    return check_list(name, value, lambda n, v: v)


SWEEP_PARAMS: dict[str, Param] = {
    **PARAMS,
    "sweep": Param("epsilon", choice(*SWEEPABLE), "the swept key"),
    "values": Param([0.1, 0.5, 1.0, 5.0, 10.0], _check_values, "its values"),
}


def sweep_points(inp: RunInput, params: dict[str, Any], base: dict[str, Param],
                 point: Any) -> tuple[list[Any], list[dict[str, Any]]]:
    """Run ``point`` at every value of the swept key (each value checked as that key)."""
    key = params["sweep"]
    values = [base[key].check(f"algorithm.values[{i}]", v)
              for i, v in enumerate(params["values"])]
    if key == "samples_per_site" and 0 in values:
        raise ScenarioError("algorithm.values: samples_per_site must be ≥ 1 in a sweep")
    out = []
    for i, v in enumerate(values):
        out.append(point(inp, {**params, key: v}, f"{key} = {v} ({i + 1}/{len(values)})"))
    return values, out


def _run_sweep(inp: RunInput) -> AlgorithmRun:
    import numpy as np

    from sim import plots

    p = inp.params
    values, points = sweep_points(inp, p, PARAMS, pca_point)
    curves = {m: [float(pt["q"][m].mean()) for pt in points] for m in METHODS}
    metrics: dict[str, Any] = {"sweep": p["sweep"], "values": values}
    metrics.update({f"q_{m}": curves[m] for m in METHODS})
    metrics.update({f"q_{m}_sd": [float(pt["q"][m].std(ddof=1)) if p["trials"] > 1 else 0.0
                                  for pt in points] for m in METHODS})
    labels = {"cape": "capePCA", "pooled_ag": "pooled AG", "conventional": "conventional",
              "local": "local AG", "nonprivate": "non-private"}
    rows = [[v, *(curves[m][i] for m in METHODS)] for i, v in enumerate(values)]
    xlabel = {"epsilon": "ε", "delta": "δ", "samples_per_site": "samples per site N_s"}
    title = (f"capePCA: captured energy vs {xlabel[p['sweep']]} "
             f"(S = {len(inp.shards)}, K = {p['k']}, {p['trials']} trials)")
    return AlgorithmRun(
        result=points[0]["result"],
        outputs={f"q_{m}": np.array([pt["q"][m] for pt in points]) for m in METHODS},
        metrics=metrics,
        plots={f"captured_energy_vs_{p['sweep']}": lambda: plots.sweep(
            values, {labels[m]: curves[m] for m in METHODS}, xlabel[p["sweep"]],
            "captured energy q = tr(Vᵀ A V)", title, logx=p["sweep"] != "samples_per_site")},
        tables=[table([p["sweep"], *METHODS], rows, "captured energy (mean over trials)")],
    )


CAPE_PCA = Algorithm(
    name="cape_pca",
    summary="capePCA (CAPE on the second-moment matrices) vs pooled AG, conventional, local",
    reference="Imtiaz & Sarwate 2018 (seed 003), Algorithm 1, Theorem 1, §6.1",
    params=PARAMS,
    run=_run,
    data_kind="spiked",
)

CAPE_PCA_SWEEP = Algorithm(
    name="cape_pca_sweep",
    summary="captured energy of capePCA and its baselines vs ε, δ or samples per site",
    reference="Imtiaz & Sarwate 2018 (seed 003), Figure 2",
    params=SWEEP_PARAMS,
    run=_run_sweep,
    data_kind="spiked",
)
