"""Seed 001 (the thesis: C1–C13 and Fig. 3.8) in the claims table
(``shared/spec/seeds_digest.md`` §8; :mod:`sim.claims.table` for the statuses).

Fig. 3.8 is reported on its own by the thesis (§3.3); §8 folds it into C11's neighbourhood.
"""

from __future__ import annotations

import itertools
import math
import tomllib

import numpy as np

from protocols import seeds
from sim.claims.table import SCENARIOS, Claim, Outcome, Runs, fmt, status

P127 = (1 << 127) - 1


def c1(runs: Runs) -> Outcome:
    m = runs.metrics("pd_nmf_audit", drop_audits=True)
    rel = m["max_rel_diff_vs_centralized"]
    return Outcome(status(rel < 1e-6),
                   f"max |T_PD − T_RRI| / max|T| = {rel:.1e} after {m['sweeps']} sweeps "
                   f"(M = 4, 2^61 − 1, 24 fractional bits)")


def _secure_sum_traffic(runs: Runs, variant: str) -> tuple[int, int]:
    """Elements sent plus received per party in the quickstart's one SecureSum call, and M."""
    run = runs.scenario("quickstart", drop_audits=True, variant=variant)
    rows = [r for r in run.run.result.ledger if r.protocol == "secure_sum"]
    m = run.scenario.n_parties
    per_party = {sum(r.elements for r in rows if p in (r.sender, r.receiver)) for p in range(m)}
    if len(per_party) != 1:
        raise RuntimeError(f"uneven SecureSum traffic {per_party}")
    return per_party.pop(), m


def c2(runs: Runs) -> Outcome:
    d = tomllib.loads((SCENARIOS / "quickstart.toml").read_text())["data"]["cols"]
    prg, m = _secure_sum_traffic(runs, "prg")
    explicit, _ = _secure_sum_traffic(runs, "explicit")
    holds = prg == 2 * (m - 1) * d and explicit == 4 * (m - 1) * d
    return Outcome(status(holds),
                   f"sent + received per party per call: PRG {prg}, explicit {explicit} "
                   f"(M = {m}, d = {d}: 2(M−1)d = {2 * (m - 1) * d}, 4(M−1)d = "
                   f"{4 * (m - 1) * d})")


def c3(runs: Runs) -> Outcome:
    privacy = runs.scenario("quickstart").report["privacy"]
    verdicts = {tuple(a["coalition"]) if "coalition" in a else tuple(a.get("members", ())):
                a["verdict"] for a in privacy}
    holds = bool(verdicts) and all(v == "private" for v in verdicts.values())
    shown = ", ".join(f"{list(c)}: {v}" for c, v in verdicts.items())
    return Outcome(status(holds), f"simulation audit, quickstart (M = 4): {shown}",
                   "every coalition of 8 parties: secure_sum_coalitions.toml")


def c4(runs: Runs) -> Outcome:
    sent = set()
    for rows in (120, 480):
        m = runs.metrics("pd_nmf_audit", drop_audits=True, rows=rows)
        sent.add(2 * int(m["elements_sent_per_party_per_sweep"]))
    k, d = m["k"], m["d"]
    expected = 2 * (4 - 1) * k * (d + 1)
    return Outcome(status(sent == {expected}),
                   f"sent + received per party per sweep = {sorted(sent)} at n = 120 and "
                   f"n = 480 (2(M−1)k(d+1) = {expected}, M = 4, k = {k}, d = {d})")


def c5(runs: Runs) -> Outcome:
    from algorithms.nmf.wr import summarize_local_model, wr_nmf

    model = summarize_local_model(np.ones((3, 1)), np.full((1, 3), 1 / 3))
    res = wr_nmf([model], 1, max_iter=20)
    extra = 0.5 * float(np.sum((math.sqrt(3) / 3 - res.W @ res.T) ** 2))
    y = float(res.W[0, 0])
    return Outcome(status(abs(y - math.sqrt(3)) < 1e-12 and extra < 1e-28),
                   f"WR-NMF on X = I_3, k = 1: y = {y:.15f}, extra error {extra:.1e}")


def c6(runs: Runs) -> Outcome:
    from scipy import stats

    from algorithms.svd.pd_svd import pd_svd
    from parties.party import Party
    from sim.simulation import Simulation

    rng = seeds.rng(5, "claims.c6.inputs")
    d, k, m = 200, 5, 4
    parties = [Party(i, pd_svd, {"X": rng.normal(size=(5, d)), "k": k, "iterations": 1,
                                 "variant": "secure_sum", "scale": 1.0}) for i in range(m)]
    result = Simulation(prime="2^127-1", seed=1, keys="preshared", sealing=False).run(parties)
    start = result.outputs[0].V_start.ravel()
    ratio = float(np.var(start, ddof=1) * d)
    low, high = stats.chi2.ppf([0.0005, 0.9995], start.size - 1) / (start.size - 1)
    return Outcome(status(low < ratio < high),
                   f"d · var(V_start) = {ratio:.3f} over {start.size} entries (M = 4, d = 200; "
                   f"99.9 % band {low:.3f}–{high:.3f})")


def c7(runs: Runs) -> Outcome:
    normed = runs.metrics("pd_svd")
    revealing = runs.metrics("pd_svd_secure_sum")
    diff = max(normed["max_abs_diff_vs_centralized"], revealing["max_abs_diff_vs_centralized"])
    reveals = bool(revealing.get("eigenvalue_estimates_revealed"))
    hides = not normed.get("eigenvalue_estimates_revealed")
    return Outcome(status(diff < 1e-5 and reveals and hides),
                   f"max |V − V_power| = {diff:.1e} (NormedSecureSum and SecureSum); the "
                   f"SecureSum variant reveals the column norms σ̂ (eigenvalue estimates "
                   f"{fmt(revealing['eigenvalue_estimates_revealed'][0])}, …), the normed one "
                   f"{'none' if hides else 'some'}")


def c8(runs: Runs) -> Outcome:
    from sim.pd_svd_cost import call_elements, extrapolate, fit_line, measure_call_seconds

    measure_call_seconds(3, 8, calls=1)  # load the compiled kernels outside the measurement
    points = [(call_elements(3, d), *measure_call_seconds(3, d)) for d in (100, 1000, 3000)]
    cpu = fit_line([p[0] for p in points], [p[1] for p in points])
    net = fit_line([p[0] for p in points], [p[2] for p in points])
    small, large = extrapolate(cpu, 100), extrapolate(cpu, 10000)
    small_net, large_net = extrapolate(net, 100), extrapolate(net, 10000)
    thesis = (small.thesis_s / 3600, large.thesis_s / 86400)
    cheaper = (small.thesis_s / small.per_column_s, large.thesis_s / large.per_column_s)
    from protocols.normed_secure_sum import PRESETS, check_layout, declared_cost

    rounds = declared_cost(check_layout(PRESETS["p127-default"], P127, 3, 100)).rounds
    return Outcome(
        status(abs(thesis[0] - 1.225) < 1e-9 and round(thesis[1], 2) == 4.09, partial=True),
        f"Table 2.2 × 300 × 7 = {thesis[0]:.3f} h (d = 100), {thesis[1]:.2f} days (d = 10⁴); "
        f"here, per column as the thesis counts: CPU {small.per_column_s:.0f} s / "
        f"{large.per_column_s:.0f} s, simulated network {small_net.per_column_s / 60:.0f} / "
        f"{large_net.per_column_s / 60:.0f} min; batched (one call of k columns per "
        f"iteration): CPU {small.batched_s:.0f} s / {large.batched_s:.0f} s, network "
        f"{small_net.batched_s / 60:.1f} / {large_net.batched_s / 60:.1f} min",
        "the thesis's arithmetic is reproduced; its premise (SPDZ's Table 2.2 times) is not a "
        f"property of the protocol: this simulator's calls take {cheaper[0]:.0f}× / "
        f"{cheaper[1]:.0f}× less CPU and are bound by latency ({rounds} rounds × 10 ms), so "
        "the study takes minutes, not hours or days; Table 2.2's ×10 per ×10 in d is not "
        "seen here (a call's fixed cost dominates up to d = 10⁴)",
    )


def c9(runs: Runs) -> Outcome:
    from parties.ksdp import (
        one_bit_sum_delta_min,
        one_bit_sum_epsilon,
        one_bit_sum_epsilon_at_delta_min,
        one_bit_sum_ks,
    )

    ks = [one_bit_sum_ks(10, p) for p in (0.5, 0.75, 0.95)]
    sim = runs.metrics("ksdp_one_bit_sum")
    sim_ks = sim["mechanisms"]["one_bit_sum"]["ks_statistic"][0]
    eps = [one_bit_sum_epsilon(n, 0.5, 1e-3) for n in (100, 1000, 10000)]
    rate = [e * math.sqrt(n) for e, n in zip(eps, (100, 1000, 10000), strict=True)]
    holds = ([round(v, 2) for v in ks] == [0.25, 0.30, 0.63]
             and abs(sim_ks - ks[0]) < 0.03 and max(rate) / min(rate) < 1.05)
    return Outcome(
        status(holds),
        f"KS (n = 10) = {ks[0]:.4f} / {ks[1]:.4f} / {ks[2]:.4f}, through SecureSum "
        f"{sim_ks:.4f} (p = .5); exp ε = p(n−1)/q: ε = "
        f"{one_bit_sum_epsilon_at_delta_min(100, 0.5):.3f} at n = 100, δ_min(10) = "
        f"{one_bit_sum_delta_min(10, 0.5):.4f}; Fig. 3.4 (δ = 10⁻³): ε = "
        f"{eps[0]:.3f} / {eps[1]:.3f} / {eps[2]:.3f} at n = 10², 10³, 10⁴ (ε√n "
        f"{min(rate):.2f}–{max(rate):.2f}: O(1/√n))",
    )


ENRON_SEEDS = (5, 6, 7)
"""The data sets of C10's Enron-shaped comparison (``scenarios/ksdp_pd_svd_enron.toml``)."""


def c10(runs: Runs) -> Outcome:
    nmf = runs.metrics("ksdp_pd_nmf")
    svd = runs.metrics("ksdp_pd_svd")
    nmf_pi = nmf["mechanisms"]["pd_nmf"]["pi"]
    pd, rev = (svd["mechanisms"][k]["pi"] for k in ("pd_svd", "sigma_revealing_svd"))
    rises = all(b > a for a, b in itertools.pairwise(nmf_pi)) and all(
        b > a for a, b in itertools.pairwise(pd))
    enron = [runs.metrics("ksdp_pd_svd_enron", seed=s)["mechanisms"] for s in ENRON_SEEDS]
    sizes = runs.metrics("ksdp_pd_svd_enron", seed=ENRON_SEEDS[0])["party_sizes"]
    e_pd, e_rev = (np.mean([m[k]["pi"] for m in enron], axis=0)
                   for k in ("pd_svd", "sigma_revealing_svd"))
    e_rises = bool(np.all(e_pd[1:] > e_pd[0]) and np.all(e_rev[1:] > e_rev[0]))
    far_above = bool(np.all(e_rev[1:] >= 0.15))
    hides_small = bool(e_pd[0] > e_rev[0])
    above = int(np.sum(e_pd > e_rev))
    holds = rises and e_rises and far_above and hides_small
    n_a = tomllib.loads((SCENARIOS / "ksdp_pd_svd_enron.toml").read_text())["algorithm"][
        "adversary_size"]
    share = [f"{n / (n + n_a):.1%}" for n in sizes]
    return Outcome(
        status(holds, partial=True),
        f"PD-NMF π = {', '.join(fmt(p, 2) for p in nmf_pi)} at victim sizes "
        f"{nmf['party_sizes']}; PD-SVD π = {', '.join(fmt(p, 2) for p in pd)} vs "
        f"Σ-revealing {', '.join(fmt(p, 2) for p in rev)} at {svd['party_sizes']} documents; "
        f"Enron-shaped (victims of {', '.join(str(n) for n in sizes)} documents = "
        f"{', '.join(share)} of the two parties', mean of {len(ENRON_SEEDS)} data sets): "
        f"PD-SVD π = {', '.join(fmt(p, 2) for p in e_pd)} vs Σ-revealing "
        f"{', '.join(fmt(p, 2) for p in e_rev)}",
        ("reproduced: π rises with the victim's size; Σ-revealing p ≫ 0.05 at Enron-shaped "
         f"sizes from {share[1]} on (≥ {min(e_rev[1:]):.2f}); hiding Σ raises π at the "
         f"smallest size. Not reproduced: PD-SVD above Σ-revealing at every size ({above}/"
         f"{len(sizes)} Enron-shaped sizes): from {sizes[1]} documents on, one document moves "
         "neither mechanism's observables beyond the sampled databases' own spread, so both sit "
         "at the null level of π and their order is chance (the thesis excepts its 33.3 % "
         "party too)" if holds else
         "not reproduced: " + "; ".join(x for x, ok in (
             ("π rising with the victim's size", rises and e_rises),
             ("Σ-revealing p ≫ 0.05 at Enron-shaped sizes", far_above),
             ("PD-SVD above Σ-revealing at the smallest size", hides_small)) if not ok)),
    )


UPLIFT_SEEDS = {"topics": range(5, 10), "ratings": range(8, 12)}
"""The seeds of C11's trend: each scenario's own and the next ones (as the tests assert)."""


DP_EPSILONS = (10.0, 1.0)
"""The ε of C11's DP-PD-NMF runs (per SecureSum; ``scenarios/pd_nmf_dp_ratings.toml``)."""


CONVERGED_SWEEPS = 150
"""Sweeps of the global model in C11's converged ratings runs (the scenario's 40 from a random
start leave it short of the parties' local models, run to convergence from three starts)."""

K_SWEEP = {"topics": (4, 16), "ratings": (2, 5)}
"""C11's effect of k: a simpler and a richer model on each scenario (the topic corpus has 8
planted topics, the ratings rank 5)."""


def _uplift(runs: Runs, kind: str, **algorithm: object) -> np.ndarray:
    """(seeds, parties by size) uplift in % over :data:`UPLIFT_SEEDS`."""
    per_seed = [runs.metrics(f"pd_nmf_uplift_{kind}", seed=s, **algorithm)["parties"]
                for s in UPLIFT_SEEDS[kind]]
    return np.array([[p["uplift_pct"] for p in sorted(parties, key=lambda q: q["train_rows"])]
                     for parties in per_seed])


def c11(runs: Runs) -> Outcome:
    """Uplift by party size over several data sets (one draw decides little: PD-NMF-Init's
    occasional poor optimum on topics, a party holding half the ratings gains about nothing):
    topics by the median over seeds, ratings by the mean; then ratings with the global model
    converged, and the effect of k (tests/sim/test_uplift_effect_of_k.py)."""
    out = []
    short: list[str] = []
    for kind, seeds_ in UPLIFT_SEEDS.items():
        fraction = runs.metrics(f"pd_nmf_uplift_{kind}", seed=seeds_[0])["parties"][0][
            "size_fraction"]
        up = _uplift(runs, kind)
        up = np.median(up, axis=0) if kind == "topics" else up.mean(axis=0)
        if not (np.all(up > 0) and up[0] == up.max()):
            short.append(f"{kind}: the largest party gains {up[-1]:.1f} %" if up[0] == up.max()
                         else f"{kind}: not largest for the smallest party")
        how = "median" if kind == "topics" else "mean"
        out.append(f"{kind} ({how} of seeds {seeds_[0]}–{seeds_[-1]}): {up[0]:.1f} % "
                   f"(smallest, {fraction:.1%}) → {up[-1]:.1f} % (largest)")
    k_ratings = K_SWEEP["ratings"]
    converged = _uplift(runs, "ratings", k=k_ratings[1], iterations=CONVERGED_SWEEPS)
    every_party_gains = bool(np.all(converged > 0))
    out.append(f"ratings with the global model converged ({CONVERGED_SWEEPS} sweeps): "
               f"{' / '.join(f'{u:.1f}' for u in converged.mean(axis=0))} % smallest → "
               f"largest, every party gaining in {int(np.all(converged > 0, axis=1).sum())} of "
               f"{len(converged)} seeds")
    notes = []
    if every_party_gains and short and short[0].startswith("ratings: the largest"):
        notes.append(short.pop(0) + " after the scenario's 40 sweeps, a global model short of "
                     "convergence against local ones run to it; every party gains once it is "
                     f"trained as long ({CONVERGED_SWEEPS} sweeps)")
    k_effect = []
    for kind, (simple_k, rich_k) in K_SWEEP.items():
        extra = {"iterations": CONVERGED_SWEEPS} if kind == "ratings" else {}
        simple = _uplift(runs, kind, k=simple_k, **extra).mean(axis=0)
        rich = _uplift(runs, kind, k=rich_k, **extra).mean(axis=0)
        gains = int(np.sum(rich > simple))
        k_effect.append(gains >= min(3, len(rich)) and rich.mean() > simple.mean())
        out.append(f"{kind} mean uplift at k = {simple_k} → {rich_k}: "
                   + ", ".join(f"{a:.1f} → {b:.1f}" for a, b in zip(simple, rich, strict=True))
                   + f" % (larger for {gains} of {len(rich)} parties)")
    if not all(k_effect):
        short.append("a richer model does not see a larger uplift")
    dp = []
    for eps in DP_EPSILONS:
        parties = runs.metrics("pd_nmf_dp_ratings", drop_audits=True, dp_epsilon=eps)["parties"]
        dp.append((eps, np.mean([p["error_global"] for p in parties]),
                   np.mean([p["error_random"] for p in parties])))
    ridge = runs.metrics("pd_nmf_dp_ratings_ridge", drop_audits=True)["parties"]
    ridge_rmse, ridge_local = (float(np.mean([p[key] for p in ridge]))
                               for key in ("error_global", "error_local"))
    out.append("DP-PD-NMF (k = 7, δ = 0.01, σ²/M per party) held-out RMSE " + ", ".join(
        f"{g:.2f} at ε = {e:g}" for e, g, _ in dp) + f" vs random guessing {dp[-1][2]:.2f}; "
        f"with a ridge of 3σ on T (post-processing) {ridge_rmse:.2f} at ε = 1")
    if dp[-1][1] > dp[-1][2]:
        short.append(f"DP-PD-NMF at ε = {dp[-1][0]:g} is worse than random guessing, not "
                     "slightly better (per-SecureSum ε on 70 releases, rows clipped to C = 1; "
                     "a total budget over the releases or C from 0.1 to 30 does no better, "
                     "benchmarks/dp_pd_nmf_readings.py): a column's noisy curvature Σ W² near 0 "
                     "sends T off and the clipped predictions to the ends of the range. A ridge "
                     f"of 3σ on T, post-processing not in the thesis, gives {ridge_rmse:.2f}, "
                     + ("below" if ridge_rmse < dp[-1][2] else "above") + " random guessing and "
                     + ("below" if ridge_rmse < ridge_local else "above")
                     + f" the local models' {ridge_local:.2f}")
    if all(k_effect):
        notes.append("reproduced: simpler models see lesser uplift (topics: the three smallest "
                     "parties and the mean; ratings: every party, up to the data's rank — "
                     "beyond it the smallest parties' gain falls again, their users' weights "
                     "refit on ~16 ratings each)")
    held = every_party_gains and all(k_effect)  # the uplift's parts; DP-PD-NMF apart
    return Outcome(status(not short, partial=held and bool(short)), "; ".join(out),
                   "; ".join([*(f"not reproduced: {x}" for x in short), *notes]))


def fig38(runs: Runs) -> Outcome:
    m = runs.metrics("pd_svd")
    diffs = [m["lra_error_global"][p] - m["lra_error_local"][p] for p in m["lra_error_local"]]
    h = runs.metrics("pd_svd_heldout")
    parties = list(h["lra_error_heldout_change"])
    change = [h["lra_error_heldout_change"][p] / h["lra_error_heldout_local"][p] for p in parties]
    holds = all(c < 0 for c in change)
    return Outcome(
        status(holds),
        f"held-out LRA error, global − local basis, relative to local: "
        f"{', '.join(f'{100 * c:+.2f} %' for c in change)} for parties of "
        f"{', '.join(str(h['heldout_rows'][p]) for p in parties)} held-out rows (5 uneven "
        f"parties, 30 % held out, k = {h['k']}); in-sample (pd_svd.toml) "
        f"{', '.join(fmt(x, 2) for x in diffs)} (≥ 0 by Eckart–Young)",
        "" if holds else "the global basis does not lower every party's held-out error",
    )


INIT_TRIALS = 3
TOPIC10_TRIALS = 10
"""Trials of the topic comparison at the scenario's k = 10 (the thesis runs k = 5 and 50 only):
3 trials leave WR-NMF and the centralized nndsvd in either order."""
INITS = ("random", "random_2x", "nndsvd", "pd_nmf_init", "pd_svd")
PRIVATE_INITS = ("random", "random_2x", "pd_nmf_init", "pd_svd")
"""The starts a party can use without pooling the data (nndsvd is computed centrally)."""


WR_K50_REASON = (
    "measured apart (benchmarks/wr_nmf_ratings_k50.py, 1 trial, docs/reproduction.md C12), "
    "the start is not why WR-NMF trails random_2x: each party's local k = 50 model of ~90 "
    "users does overfit (train / held-out RMSE 0.00 / 1.95, against 0.50 / 0.67 at k = 5), "
    "yet with W fitted the WR-NMF topics are the best start (objective 16,270; nndsvd 32,642, "
    "random 47,805); PD-NMF starts from W = 0, so its first sweep spends that lead (38,393 / "
    "33,746 / 38,095), after τ = 15 sweeps the three lie within 270 (13,348 / 13,502 / "
    "13,618) while each still falls ~190 a sweep, and M = 3 (≈ 270 users a party, held-out "
    "RMSE 1.15) ends only 36 lower (13,312) and local k = 5 models 178 higher (13,526): τ "
    "more sweeps, not the start, decide")
"""Why WR-NMF ends above random_2x on ratings at k = 50: a fixed statement of the probe's
measurement (too costly for the row: local fits at k = 5 / 50 for M = 9 and 3 and five
τ-sweep curves)."""


def _init_ranking(runs: Runs, name: str, k: int, trials: int = INIT_TRIALS,
                  ) -> list[tuple[str, float]]:
    """Initialisations by final objective (random_2x at 2τ, the others at τ), best first."""
    m = runs.metrics(name, trials=trials, k=k, inits=list(INITS))
    return sorted(((i, m[f"final_objective_{i}"]) for i in INITS), key=lambda t: t[1])


def _names(r: list[tuple[str, float]]) -> str:
    return " < ".join(i.replace("pd_nmf_init", "WR-NMF").replace("pd_svd", "PD-SVD")
                      for i, _ in r)


def c12(runs: Runs) -> Outcome:
    topics5 = _init_ranking(runs, "pd_nmf_init_comparison", 5)
    topics10 = _init_ranking(runs, "pd_nmf_init_comparison", 10, trials=TOPIC10_TRIALS)
    ratings5 = _init_ranking(runs, "pd_nmf_init_comparison_ratings", 5)
    t50 = runs.metrics("pd_nmf_init_comparison_topics_k50")
    topics50 = sorted(((i, t50[f"final_objective_{i}"]) for i in INITS), key=lambda t: t[1])
    spec_t50 = tomllib.loads((SCENARIOS / "pd_nmf_init_comparison_topics_k50.toml").read_text())
    k50 = runs.metrics("pd_nmf_init_comparison_ratings_k50")
    ratings50 = sorted(((i, k50[f"final_objective_{i}"]) for i in INITS), key=lambda t: t[1])
    spec50 = tomllib.loads((SCENARIOS / "pd_nmf_init_comparison_ratings_k50.toml").read_text())
    tau, trials50 = spec50["algorithm"]["iterations"], spec50["algorithm"]["trials"]
    at_tau = [i for i in k50["ranking_at_iterations"] if i != "random_2x"]
    final50 = dict(ratings50)
    checks = {
        "topics k = 5: WR-NMF best": topics5[0][0] == "pd_nmf_init",
        "topics k = 10: WR-NMF best of the private starts": next(
            i for i, _ in topics10 if i in PRIVATE_INITS) == "pd_nmf_init",
        "topics k = 50: WR-NMF best": topics50[0][0] == "pd_nmf_init",
        "ratings k = 5: random / random_2x best": ratings5[0][0] in ("random", "random_2x"),
        "ratings k = 50: nndsvd / PD-SVD best": ratings50[0][0] in ("nndsvd", "pd_svd"),
        "ratings k = 50: WR-NMF below random_2x": final50["pd_nmf_init"] < final50["random_2x"],
    }
    failed = [c for c, ok in checks.items() if not ok]
    spread = topics5[-1][1] / topics5[0][1] - 1
    svd_first = set(at_tau[:2]) == {"nndsvd", "pd_svd"}

    def at50(init: str) -> str:
        name = init.replace("pd_nmf_init", "WR-NMF").replace("pd_svd", "PD-SVD")
        return (f"{name} {k50[f'final_objective_{init}']:,.0f} ± "
                f"{k50[f'final_objective_sem_{init}']:,.0f}")

    return Outcome(
        status(not failed, partial=bool(failed)),
        f"final objective, best first (M = 9): topics k = 5 ({INIT_TRIALS} trials): "
        f"{_names(topics5)} (all within {spread:.1%}); topics k = 10 ({TOPIC10_TRIALS} "
        f"trials): {_names(topics10)}; topics k = 50 (NIPS-shaped, "
        f"{spec_t50['data']['rows']} × {spec_t50['data']['cols']}, "
        f"{spec_t50['algorithm']['trials']} trials): {_names(topics50)} "
        f"(WR-NMF {t50['final_objective_pd_nmf_init']:.4g} ± "
        f"{t50['final_objective_sem_pd_nmf_init']:.2g}, random_2x "
        f"{t50['final_objective_random_2x']:.4g} ± {t50['final_objective_sem_random_2x']:.2g})"
        f"; ratings k = 5 ({INIT_TRIALS} trials): {_names(ratings5)};"
        f" ratings k = 50 (ML-1M-shaped, {spec50['data']['rows']} × {spec50['data']['cols']}"
        f" at {spec50['data']['density']:.0%}, {trials50} trials): "
        f"{_names(ratings50)}; after τ sweeps each (random_2x at τ left out): "
        f"{_names([(i, 0.0) for i in at_tau])}",
        ("not reproduced: " + "; ".join(failed) + ". " if failed else "")
        + (f"At k = 50 the SVD starts end lowest of those run for τ = {tau} sweeps "
           f"({at50('pd_svd')}, {at50('nndsvd')}, {at50('random')}, {at50('pd_nmf_init')}); "
           if svd_first else "")
        + (f"{at50('random_2x')} ends below them all: at k = 50 no start is "
           f"near convergence after τ = {tau} sweeps, so τ more sweeps outweigh any start; "
           + WR_K50_REASON + "; the ratings are a rank-5 model plus noise, so 45 of the 50 "
           "components fit noise. "
           if ratings50[0][0] == "random_2x" else "")
        + "The thesis ran topics at k = 5 and 50; k = 10 is the scenario's own",
    )


TOPIC_SCORES = (("umass_expected", "UMass (eq. 1.28)"), ("npmi_mean", "NPMI"),
                ("perplexity", "held-out perplexity"), ("heldout_fro2", "held-out Fro2"))


def as_good_within_spread(private: dict, central: dict, higher_is_better: bool) -> bool:
    """PD-NMF's mean is better than centralized's, or worse by at most two standard
    deviations of the difference of single trials (√(sd_pd² + sd_c²))."""
    gap = private["mean"] - central["mean"]
    if not higher_is_better:
        gap = -gap
    return gap >= -2.0 * math.hypot(private["sd"], central["sd"])


TOPIC_MODEL_REPETITIONS = 3
"""Draws of every shaped corpus in C13's NMF / LDA / K-means comparison."""


def tables_1_4_1_5(repetitions: int = TOPIC_MODEL_REPETITIONS) -> tuple[bool, bool, str, str]:
    """(NMF wins exactly Table 1.5's six measures, NMF wins some of them, measured, note) from
    :func:`sim.experiments.studies.topic_models.compare_topic_models`."""
    from sim.experiments.studies.topic_models import THESIS_BEST, compare_topic_models

    got = compare_topic_models(repetitions=repetitions)
    t14, t15 = got["table_1_4"], got["table_1_5"]
    thesis_nmf = {m for m, (best, _, _) in THESIS_BEST.items() if best == "NMF"}
    here_nmf = {m for m, row in t14.items() if row["best"] == "NMF"}
    agree = [m for m, row in t14.items() if row["best"] == THESIS_BEST[m][0]]
    shaky = [m for m, row in t14.items() if row["best"] != "tie" and row["consistent"] < 1.0]
    wins = "; ".join(f"{name} best on {row['best']} (mean ∆ {row['mean_delta']:.1f} %)"
                     for name, row in t15.items())
    measured = (
        f"Tables 1.4–1.5 analogue (NIPS-, 20NG-, Reuters-shaped synthetic corpora, "
        f"{repetitions} draws each, planted k): {wins} — thesis NMF 6 / 61.89, LDA 7 / 70.32, "
        f"K-means 4 / 86.40; NMF best here on {', '.join(sorted(here_nmf)) or 'none'}; "
        f"Table 1.4's winner agrees on {len(agree)} of {len(t14)} measures")
    missed = sorted(thesis_nmf - here_nmf)
    note = ("NMF wins " + (f"{len(thesis_nmf & here_nmf)} of the thesis's six (not "
                           f"{', '.join(missed)})" if missed else "all six of the thesis's")
            + (f"; winners not unanimous over draws on {', '.join(shaky)}" if shaky else "")
            + "; untuned models at the planted k, where the thesis picks each measure's best "
              "of nine Hyperband-tuned models (sparsity-seeking ℓ2 for NMF)")
    return (here_nmf == thesis_nmf, bool(thesis_nmf & here_nmf), measured, note)


def tuned_tables(runs: Runs) -> tuple[bool, str, str]:
    """(NMF wins all six of its thesis rows, measured, note) from the Hyperband-tuned tables of
    ``scenarios/topic_models_tuned.toml`` (thesis Algorithm 5; about 2 CPU-minutes)."""
    from sim.experiments.studies.topic_models import THESIS_BEST

    m = runs.metrics("topic_models_tuned")
    spec = tomllib.loads((SCENARIOS / "topic_models_tuned.toml").read_text())["algorithm"]
    t14, t15 = m["table_1_4"], m["table_1_5"]
    thesis_nmf = {k for k, (best, _, _) in THESIS_BEST.items() if best == "NMF"}
    here_nmf = {k for k, row in t14.items() if row["best"] == "NMF"}
    ks = sorted({f["config"]["k"] for corpus in m["tuning"].values() for draw in corpus
                 for f in draw["NMF"]["finalists"]})
    wins = "; ".join(f"{name} best on {row['best']} (mean ∆ {row['mean_delta']:.1f} %)"
                     for name, row in t15.items())
    measured = (f"Hyperband-tuned (R = {spec['tuning_R']}, η = 3, k ≤ {spec['tuning_k_max']}, "
                f"scale {spec['scale']}, {spec['repetitions']} draw(s)): {wins}; NMF best on "
                f"{', '.join(sorted(here_nmf)) or 'none'}")
    lost = sorted(thesis_nmf - here_nmf)
    finalists = [f["config"] for corpus in m["tuning"].values() for draw in corpus
                 for f in draw["NMF"]["finalists"]]
    smoothed = sum(c["l2_t"] > 0 for c in finalists)
    tfidf = sum(c["weighting"] == "tfidf" for c in finalists)
    note = ("tuned by Hyperband (E = validation perplexity; NMF finalists' k "
            f"{', '.join(map(str, ks))}): NMF wins {len(thesis_nmf & here_nmf)} of the thesis's "
            f"six" + (f" (not {', '.join(lost)})" if lost else "")
            + f"; measured cause: selecting by held-out perplexity picks smoothed topics — "
              f"{smoothed} of {len(finalists)} NMF finalists have ℓ2_T > 0 (the thesis's NMF "
              f"rows come from sparsity-seeking ℓ2 < 0) and {tfidf} of {len(finalists)} use "
              "TF-IDF; the thesis does not say which evaluation it tuned by")
    return here_nmf >= thesis_nmf, measured, note


def c13(runs: Runs) -> Outcome:
    from sim.experiments.studies.topic_quality import HIGHER_IS_BETTER

    m = runs.metrics("pd_nmf_topic_quality")
    pd, central = m["pd_nmf"], m["centralized"]
    holds = all(as_good_within_spread(pd[s], central[s], HIGHER_IS_BETTER[s])
                for s, _ in TOPIC_SCORES)
    shown = "; ".join(f"{label} {pd[s]['mean']:.4g} ± {pd[s]['sd']:.2g} vs "
                      f"{central[s]['mean']:.4g} ± {central[s]['sd']:.2g}"
                      for s, label in TOPIC_SCORES)
    six, some, tables, tables_note = tables_1_4_1_5()
    tuned_six, tuned, tuned_note = tuned_tables(runs)
    return Outcome(
        status(holds and (six or tuned_six), partial=holds or some),
        f"PD-NMF vs centralized NMF ({m['trials']} trials, M = 4, k = {m['k']}, NIPS-shaped "
        f"synthetic corpus, {m['train_rows']} + {m['test_rows']} held-out documents): {shown}; "
        f"planted topics' UMass mean {m['planted']['umass_mean']:.4g} (PD-NMF "
        f"{pd['umass_mean']['mean']:.4g}). {tables}. {tuned}",
        ("PD-NMF's topics are as coherent and fit held-out documents as well as centralized "
         "NMF's (within 2 sd of the trial-to-trial spread)" if holds else
         "PD-NMF's topics score worse than centralized NMF's beyond the trial spread")
        + f"; {tables_note}; {tuned_note}",
    )


CLAIMS_001: tuple[Claim, ...] = (
    Claim("C1", "001", "§2.2, Theorem 2", "PD-NMF-Iter ≡ centralised RRI-NMF from the same T_0",
          ("tests/algorithms/nmf/test_pd_nmf.py::test_theorem2_iter_equals_centralized_rri",),
          c1),
    Claim("C2", "001", "§2.2, SecureSum", "2(M−1)d elements per party per call (PRG), "
          "4(M−1)d explicit", ("tests/protocols/test_secure_sum.py::"
                               "test_elements_per_party_and_accuracy_for_2_to_8_parties",), c2),
    Claim("C3", "001", "§2.2, SecureSum", "coalition views simulatable from inputs + sum",
          ("tests/parties/test_audit.py",), c3),
    Claim("C4", "001", "§2.2, Algorithm 7", "PD-NMF-Iter traffic 2(M−1)k(d+1) per party per "
          "sweep, independent of n", ("tests/algorithms/nmf/test_pd_nmf.py::"
                                      "test_iter_elements_per_party_per_sweep_independent_of_n",),
          c4),
    Claim("C5", "001", "§2.1, Claim 1", "X = I_3, k = 1 ⇒ zero extra WR-NMF error at y = √3",
          ("tests/algorithms/nmf/test_wr.py::test_claim1_wr_nmf_returns_the_local_topic_with_"
           "y_sqrt3",), c5),
    Claim("C6", "001", "§2.3, Algorithm 10", "Σ_m N(0, 1/(Md)) has variance 1/d",
          ("tests/algorithms/svd/test_pd_svd.py::test_initial_block_has_variance_one_over_d",),
          c6),
    Claim("C7", "001", "§2.3, Algorithms 9–10", "PD-SVD V̂ ≡ block power iteration; the "
          "SecureSum variant also reveals column norms",
          ("tests/algorithms/svd/test_pd_svd.py::test_pd_svd_equals_centralized_power_"
           "iteration_and_numpy",), c7),
    Claim("C8", "001", "§2.3, Table 2.2", "300 × 7 × 2.1 s ≈ 1.2 h; 300 × 7 × 168.1 s ≈ 4 days",
          ("tests/sim/test_pd_svd_cost.py",), c8),
    Claim("C9", "001", "§3.1, Figs. 3.3–3.5", "one-bit sum: KS = 0.25 / 0.30 / 0.63 at n = 10; "
          "exp ε = p(n−1)/q at δ_min; ε ∈ O(1/√n) for vanishing δ",
          ("tests/parties/test_ksdp.py", "tests/sim/test_ksdp.py::test_one_bit_sum_through_"
           "secure_sum_estimates_the_closed_form"), c9),
    Claim("C10", "001", "§3.4, Figs. 3.9–3.10", "KSDP p rises with party size; PD-SVD p > "
          "Σ-revealing p; Σ-revealing p ≫ 0.05", ("tests/sim/test_ksdp.py",), c10,
          expensive=True),
    Claim("C11", "001", "§3.3, Fig. 3.7", "uplift positive for all party sizes, largest for "
          "small ones; smaller k, lesser uplift; DP-PD-NMF RMSE near random",
          ("tests/sim/test_experiments.py::test_uplift_topic_scenario_reproduces_the_thesis_"
           "trend", "tests/sim/test_experiments.py::test_uplift_ratings_scenario_reproduces_"
           "the_thesis_trend", "tests/sim/test_experiments.py::test_ratings_uplift_falls_with_"
           "party_size_in_every_repetition", "tests/sim/test_uplift_effect_of_k.py",
           "tests/sim/test_dp_pd_nmf.py::test_dp_pd_nmf_rmse_"
           "climbs_to_random_guessing_as_epsilon_shrinks",
           "tests/sim/test_dp_pd_nmf.py::test_a_ridge_at_the_noise_level_takes_dp_pd_nmf_below_"
           "random_guessing"), c11, expensive=True),
    Claim("Fig. 3.8", "001", "§3.3, Fig. 3.8", "PD-SVD's global basis lowers a party's "
          "held-out LRA error", ("tests/algorithms/svd/test_pd_svd.py::test_lra_error_with_the_"
                                 "global_basis_is_never_below_the_local_optimum",
                                 "tests/sim/test_pd_svd_heldout.py::test_global_basis_lowers_"
                                 "every_partys_heldout_error"), fig38),
    Claim("C12", "001", "§2.4, Figs. 2.4–2.5", "topics → WR-NMF best; ratings k = 5 → random / "
          "random_2x; ratings k = 50 → nndsvd / PD-SVD, WR-NMF > random_2x",
          ("tests/sim/test_experiments.py::test_init_ranking_of_the_thesis_on_the_comparison_"
           "scenarios", "tests/sim/test_init_comparison_k50.py::test_svd_starts_lead_at_equal_"
           "sweeps_and_random_2x_leads_overall_at_k50", "tests/sim/test_init_comparison_k50.py::"
           "test_wr_nmf_leads_topic_modelling_at_k50", "tests/sim/test_pd_nmf_divergence.py"),
          c12, expensive=True),
    Claim("C13", "001", "§1.5, Tables 1.4–1.5", "NMF rows: six 'best' measures, mean ∆ 61.89; "
          "(Ch. 2) PD-NMF's topics as good as centralized NMF's",
          ("tests/algorithms/nmf/test_topic_quality.py",
           "tests/algorithms/nmf/test_topic_measures.py",
           "tests/sim/test_topic_quality.py::test_pd_nmf_topics_are_as_coherent_as_"
           "centralized_nmf_topics",
           "tests/sim/test_topic_models.py::test_tables_1_4_1_5_what_holds_on_shaped_corpora",
           "tests/sim/test_topic_tuning.py::test_tuned_tables_1_4_1_5_what_holds"),
          c13, expensive=True),
)
