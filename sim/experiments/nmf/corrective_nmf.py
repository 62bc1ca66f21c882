"""Catalogue entry ``corrective_nmf`` (seed 002, Algorithm 1) on the simulator.

Ballen, *NMF under adversarial noise* (digest §3): users (rows) are split across the parties,
who run Algorithm 1 with the H update's sums through SecureSum
(:mod:`algorithms.nmf.corrective`). A held-out fraction (``holdout``) of every genuine user's
ratings is the test set; the metric ``rmse`` is the RMSE of the clipped predictions
clip(WH, rating range) on it.

``[attack]`` (§3.5): ``model = "profile_injection"`` (Model 3: ``fake_users`` new profiles
rating every item of ``target_items`` ``rating`` and ``filler`` other items at random) or
``"informed"`` (Model 4: ``fake_users`` of the injecting party's own users turned adversarial,
rating the targets ``rating``); ``party`` is the malicious party, which runs the honest
program on its poisoned rows (:func:`~algorithms.nmf.corrective.injecting_party`). Items are
named by their ids in the data (the file's item ids; 1..m for synthetic data). With an attack
the entry also runs the centralized reference on the clean training data from the same start
and reports the paper's **mean absolute prediction shift** on the target items over the genuine
(non-adversarial) users, and ``rmse_target`` on the targets' held-out ratings.

Tables 1–2's comparison under the paper's protocol is ``corrective_nmf_comparison``
(:mod:`sim.experiments.nmf.corrective_nmf_tables`).

λ is ``lam``, or — when ``corrupt_probability`` (p) and ``noise_sd`` (σ) are given — the
probabilistic reading of §2.3 (:func:`~algorithms.nmf.corrective.lambda_from_noise`).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from algorithms import data as data_io
from algorithms.nmf.corrective import (
    CorrectiveSettings,
    corrective_nmf,
    corrective_party,
    declared_iteration_elements,
    injecting_party,
    lambda_from_noise,
    random_start,
)
from parties.party import Party
from protocols import seeds
from protocols.errors import DataError, InputError, ScenarioError
from sim import plots
from sim.catalog.nmf import (
    ATTACK_MODELS,
)
from sim.entry import (
    AlgorithmRun,
    EstimateInput,
    RunInput,
    Workload,
    choice,
    integer,
    number,
)
from sim.experiments.secure_sum import secure_sum_workload
from sim.privacy import AuditTarget, first_call_inputs, secure_sum_program
from sim.simulation import Result


def attack_fields(table_: Mapping[str, Any], n_parties: int, allowed: set[str], *,
                  targets_required: bool, hint: str = "") -> dict[str, Any]:
    """Check the ``[attack]`` keys every corrective entry shares: fake_users, target_items,
    rating, party, filler (``allowed`` adds the entry's own; ``hint`` explains a refusal)."""
    allowed = allowed | {"fake_users", "target_items", "rating", "party", "filler"}
    extra = sorted(set(table_) - allowed)
    if extra:
        raise ScenarioError(f"unknown key{'s' if len(extra) > 1 else ''} "
                            f"{', '.join(map(repr, extra))} in [attack]{hint}; allowed: "
                            f"{', '.join(sorted(allowed))}")
    targets = table_.get("target_items")
    if (targets is not None or targets_required) and (
            not isinstance(targets, list) or not targets or not all(
                isinstance(t, int) and not isinstance(t, bool) for t in targets)):
        raise ScenarioError(f"attack.target_items = {targets!r} must be a non-empty list of "
                            "item ids (as in the data; 1..m for synthetic data)"
                            + ("" if targets_required else ", or left out"))
    party = integer(low=0)("attack.party", table_.get("party", 0))
    if party >= n_parties:
        raise ScenarioError(f"attack.party = {party}: the injecting party does not exist; the "
                            f"parties are 0..{n_parties - 1}")
    rating = table_.get("rating")
    return {
        "fake_users": integer(low=1)("attack.fake_users", table_.get("fake_users", 20)),
        "target_items": None if targets is None else sorted(set(targets)),
        "rating": None if rating is None else number()("attack.rating", rating),
        "party": party,
        "filler": integer(low=0)("attack.filler", table_.get("filler", 19)),
    }


def check_attack(table_: Mapping[str, Any], n_parties: int) -> dict[str, Any]:
    """Validate ``[attack]``: model, fake_users, target_items, rating, party, filler."""
    fields = attack_fields(table_, n_parties, {"model"}, targets_required=True)
    model = choice(*ATTACK_MODELS)("attack.model", table_.get("model", "profile_injection"))
    return {"model": model, **fields}


def rating_range(observed: np.ndarray) -> tuple[float, float]:
    """The lowest and highest observed rating (``observed`` without NaN)."""
    if observed.size == 0:
        raise DataError("the ratings hold no observed entry to train on")
    return float(observed.min()), float(observed.max())


def attack_rating(attack: Mapping[str, Any], low: float, high: float) -> float:
    """The adversaries' rating: ``attack.rating``, by default the lowest; inside the range."""
    rating = low if attack["rating"] is None else attack["rating"]
    if not low <= rating <= high:
        raise ScenarioError(f"attack.rating = {rating} is outside the data's rating range "
                            f"{low:g}..{high:g}")
    return rating


@dataclass(frozen=True)
class Setup:
    """The split data, the start and the attack, shared by every run of a scenario."""

    trains: list[np.ndarray]  # per party: genuine users' training ratings
    test: np.ndarray  # genuine users × items, NaN except held-out ratings
    low: float
    high: float
    k: int
    W0: list[np.ndarray]  # per party, genuine rows (then fake rows for the injecting party)
    H0: np.ndarray
    lam: float
    attack: dict[str, Any] | None
    target_cols: np.ndarray
    fake: np.ndarray | None  # Model 3 profiles
    poisoned: list[np.ndarray]  # per party: what it feeds the algorithm under attack
    adversarial_rows: np.ndarray  # genuine-user rows turned adversarial (Model 4), pooled index


def lambda_param(p: dict[str, Any]) -> float:
    """λ from the checked ``[algorithm]`` keys: ``lam``, or §2.3's from p and σ, or 1."""

    prob, sd = p["corrupt_probability"], p["noise_sd"]
    if (prob is None) != (sd is None):
        raise ScenarioError("algorithm.corrupt_probability and algorithm.noise_sd go together "
                            "(λ of §2.3); give both or neither")
    if prob is not None:
        if p["lam"] is not None:
            raise ScenarioError("algorithm.lam and corrupt_probability/noise_sd both set λ; "
                                "keep one")
        try:
            return lambda_from_noise(prob, sd)
        except InputError as exc:
            raise ScenarioError(f"[algorithm]: {exc}") from exc
    return 1.0 if p["lam"] is None else p["lam"]


def target_columns(inp: RunInput, ids: list[int]) -> np.ndarray:
    """The column indices of the item ids ``ids`` (the data's ids; 1..m for synthetic data)."""

    dataset = inp.extras.get("dataset")
    n_items = inp.data.shape[1]
    col_ids = getattr(dataset, "col_ids", None)
    col_ids = np.arange(1, n_items + 1) if col_ids is None else np.asarray(col_ids)
    lookup = {int(c): j for j, c in enumerate(col_ids.tolist())}
    unknown = [i for i in ids if i not in lookup]
    if unknown:
        shown = f"{int(col_ids.min())}..{int(col_ids.max())}" if col_ids.size else "none"
        plural = "s" if len(unknown) > 1 else ""
        raise ScenarioError(f"attack.target_items names unknown item{plural} {unknown}; the "
                            f"data's item ids range over {shown} ({n_items} items)")
    return np.array([lookup[i] for i in ids], dtype=np.int64)


def ratings_of(inp: RunInput) -> np.ndarray:
    """The users × items ratings (NaN where missing), with ``algorithm.k`` checked against
    their shape."""

    X = np.asarray(inp.data, dtype=np.float64)
    n, n_items = X.shape
    if inp.params["k"] > min(n, n_items):
        raise ScenarioError(f"algorithm.k = {inp.params['k']} must be ≤ min(users, items) = "
                            f"{min(n, n_items)}")
    return X


def build_setup(inp: RunInput) -> Setup:
    """Hold out test ratings, draw the start, build the attack (module docstring)."""

    p = inp.params
    X = ratings_of(inp)
    n, n_items = X.shape
    lam = lambda_param(p)
    rng = seeds.rng(inp.seed, "corrective_nmf.holdout")
    trains, tests = [], []
    for shard in inp.shards:
        h = data_io.holdout_entries(np.asarray(shard, dtype=np.float64), p["holdout"], rng)
        trains.append(h.train)
        tests.append(h.test)
    low, high = rating_range(np.concatenate([t[~np.isnan(t)] for t in trains]))
    attack = inp.attack
    target_cols = np.zeros(0, dtype=np.int64)
    fake = None
    poisoned = [t.copy() for t in trains]
    adversarial = np.zeros(0, dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum([t.shape[0] for t in trains])])
    n_fake = 0
    if attack is not None:
        target_cols = target_columns(inp, attack["target_items"])
        rating = attack_rating(attack, low, high)
        attack = {**attack, "rating": rating}
        a_rng = seeds.rng(inp.seed, "corrective_nmf.attack")
        m = attack["party"]
        if attack["model"] == "profile_injection":
            fake = data_io.fake_profiles(n_items, target_cols, attack["fake_users"], rating, low,
                                         high, a_rng, attack["filler"])
            poisoned[m] = np.vstack([trains[m], fake])
            n_fake = fake.shape[0]
        else:
            rows_m = trains[m].shape[0]
            if attack["fake_users"] > rows_m:
                raise ScenarioError(f"attack.fake_users = {attack['fake_users']}: party {m} has "
                                    f"only {rows_m} users to turn adversarial")
            local = np.sort(a_rng.choice(rows_m, attack["fake_users"], replace=False))
            poisoned[m] = data_io.convert_users(trains[m], local, target_cols, rating)
            adversarial = offsets[m] + local
    i_rng = seeds.rng(inp.seed, "corrective_nmf.init")
    W_all, H0 = random_start(n + n_fake, n_items, p["k"], i_rng, mean_rating=(low + high) / 2)
    W0 = [W_all[a:b] for a, b in itertools.pairwise(offsets)]
    if n_fake:
        W0[attack["party"]] = np.vstack([W0[attack["party"]], W_all[n:]])
    test = np.vstack(tests)
    test[adversarial] = np.nan  # adversaries' ratings are not genuine
    return Setup(trains, test, low, high, p["k"], W0, H0, lam, attack, target_cols, fake,
                 poisoned, adversarial)


def settings_of(p: dict[str, Any], lam: float, mode: str | None = None,
                interpolate: bool | None = None) -> CorrectiveSettings:
    return CorrectiveSettings(mode=mode or p["mode"], missing=p["missing"], lam=lam,
                              interpolate=p.get("interpolate", True) if interpolate is None
                              else interpolate)


@dataclass
class Outcome:
    """One run: the genuine users' predictions, metrics and the simulation."""

    result: Result | None
    W: np.ndarray  # genuine users' rows
    H: np.ndarray
    pred: np.ndarray  # clipped predictions, genuine users
    clipped_loss: list[float]
    squared_error: list[float]
    corrupt_genuine: float
    corrupt_injected: float | None


def simulate(inp: RunInput, setup: Setup, settings: CorrectiveSettings, attacked: bool,
             seed: int) -> Outcome:
    """Run Algorithm 1 among the parties; the injecting party poisons its rows if attacked."""
    parties = corrective_parties(inp, setup, settings, attacked)
    result = inp.simulation.run(parties, seed=seed)
    fits = [result.outputs[m] for m in range(len(parties))]
    return _outcome(result, setup, fits, attacked)


def corrective_parties(inp: RunInput, setup: Setup, settings: CorrectiveSettings,
                       attacked: bool) -> list[Party]:
    """The parties of one run of Algorithm 1 (an audit replays them)."""

    p = inp.params
    parties = []
    fake_party = setup.attack["party"] if attacked and setup.fake is not None else None
    for m, train in enumerate(setup.trains):
        common = {"H0": setup.H0, "iterations": p["iterations"], "settings": settings,
                  "variant": p["variant"]}
        if m == fake_party:
            parties.append(Party(m, lambda ctx, **kw: injecting_party(ctx, **kw),
                                 {"V": train, "fake": setup.fake, "W0": setup.W0[m], **common}))
        else:
            V = setup.poisoned[m] if attacked else train
            W0 = setup.W0[m][: train.shape[0]]
            parties.append(Party(m, lambda ctx, **kw: corrective_party(ctx, **kw),
                                 {"V": V, "W0": W0, **common}))
    return parties


def _outcome(result: Result | None, setup: Setup, fits: list[Any], attacked: bool) -> Outcome:
    genuine = [fit.W[: t.shape[0]] for fit, t in zip(fits, setup.trains, strict=True)]
    W = np.vstack(genuine)
    H = fits[0].H
    pred = np.clip(W @ H, setup.low, setup.high)
    marks = np.vstack([fit.corrupt[: t.shape[0]] for fit, t in zip(fits, setup.trains,
                                                                    strict=True)])
    observed = ~np.isnan(np.vstack(setup.trains))
    corrupt_injected = None
    if attacked and setup.attack is not None:
        m = setup.attack["party"]
        if setup.fake is not None:
            fake_marks = fits[m].corrupt[setup.trains[m].shape[0]:]
            fake_obs = ~np.isnan(setup.fake)
        else:
            fake_marks = marks[np.ix_(setup.adversarial_rows, setup.target_cols)]
            fake_obs = np.ones_like(fake_marks)
        corrupt_injected = float(fake_marks[fake_obs].mean()) if fake_obs.any() else 0.0
        if setup.fake is None:  # Model 4: the converted users are not genuine
            keep = np.ones(W.shape[0], dtype=bool)
            keep[setup.adversarial_rows] = False
            marks, observed = marks[keep], observed[keep]
    return Outcome(result, W, H, pred,
                   np.sum([f.clipped_loss for f in fits], axis=0).tolist(),
                   np.sum([f.squared_error for f in fits], axis=0).tolist(),
                   float(marks[observed].mean()) if observed.any() else 0.0,
                   corrupt_injected)


def centralized(inp: RunInput, setup: Setup, settings: CorrectiveSettings,
                attacked: bool) -> Outcome:
    """The centralized reference on the stacked rows (poisoned if ``attacked``)."""

    rows = setup.poisoned if attacked else setup.trains
    W0 = setup.W0 if attacked else [w[: t.shape[0]] for w, t in zip(setup.W0, setup.trains,
                                                                      strict=True)]
    fit = corrective_nmf(np.vstack(rows), np.vstack(W0), setup.H0,
                         iterations=inp.params["iterations"], settings=settings)
    sizes = [r.shape[0] for r in rows]
    edges = np.concatenate([[0], np.cumsum(sizes)])
    parts = [replace(fit, W=fit.W[a:b], corrupt=fit.corrupt[a:b], clipped_loss=[],
                     squared_error=[])
             for a, b in itertools.pairwise(edges)]
    out = _outcome(None, setup, parts, attacked)
    out.clipped_loss, out.squared_error = fit.clipped_loss, fit.squared_error
    return out


def rmse(test: np.ndarray, pred: np.ndarray, cols: np.ndarray | None = None) -> float | None:
    """RMSE over the held-out ratings (only in ``cols`` if given); None if there are none."""

    mask = ~np.isnan(test)
    if cols is not None:
        keep = np.zeros(test.shape[1], dtype=bool)
        keep[cols] = True
        mask &= keep[None, :]
    if not mask.any():
        return None
    return float(np.sqrt(np.mean((test[mask] - pred[mask]) ** 2)))


def prediction_shift(clean: Outcome, attacked: Outcome, setup: Setup,
                     signed: bool = False) -> float:
    """Mean |WH* − WH| on the target items over the genuine users (§3.6); ``signed``: the
    mean of WH − WH* (negative when the attack pushed the targets down)."""

    keep = np.ones(clean.pred.shape[0], dtype=bool)
    keep[setup.adversarial_rows] = False
    cols = setup.target_cols
    diff = attacked.pred[keep][:, cols] - clean.pred[keep][:, cols]
    return float(np.mean(diff if signed else np.abs(diff)))


def run(inp: RunInput) -> AlgorithmRun:
    p = inp.params
    setup = build_setup(inp)
    settings = settings_of(p, setup.lam)
    attacked = setup.attack is not None
    out = simulate(inp, setup, settings, attacked, inp.seed)
    reference = centralized(inp, setup, settings, attacked)
    n_items = setup.H0.shape[1]
    metrics: dict[str, Any] = {
        "rmse": rmse(setup.test, out.pred),
        "lam": setup.lam, "mode": settings.mode, "missing": settings.missing,
        "max_abs_diff_H_vs_centralized": float(np.max(np.abs(out.H - reference.H))),
        "clipped_loss": out.clipped_loss, "squared_error": out.squared_error,
        "corrupt_fraction_genuine": out.corrupt_genuine,
        "users": int(sum(t.shape[0] for t in setup.trains)), "items": n_items, "k": setup.k,
        "rating_range": [setup.low, setup.high],
        "held_out_ratings": int((~np.isnan(setup.test)).sum()),
        "elements_sent_per_party_per_iteration_declared": declared_iteration_elements(
            p["variant"], len(setup.trains), setup.k, n_items),
    }
    metrics["elements_sent_per_party_per_iteration"] = (
        out.result.ledger.elements_by_sender(protocol="secure_sum").get(0, 0)
        / p["iterations"])
    if attacked:
        clean = centralized(inp, setup, settings, False)
        metrics.update({
            "attack": setup.attack,
            "rmse_target": rmse(setup.test, out.pred, setup.target_cols),
            "rmse_without_attack": rmse(setup.test, clean.pred),
            "rmse_target_without_attack": rmse(setup.test, clean.pred, setup.target_cols),
            "prediction_shift": prediction_shift(clean, out, setup),
            "signed_prediction_shift": prediction_shift(clean, out, setup, signed=True),
            "corrupt_fraction_injected": out.corrupt_injected,
        })
    curves = {"clipped loss Σ min(err², λ)": out.clipped_loss,
              "squared error Σ err²": out.squared_error}
    title = f"corrective NMF ({settings.mode}-corrupt, {settings.missing}-missing), λ = " \
            f"{setup.lam:.3g}{', under attack' if attacked else ''}"
    return AlgorithmRun(
        result=out.result,
        outputs={"H": out.H, "W": out.W},
        metrics=metrics,
        audit_target=AuditTarget(
            tuple(corrective_parties(inp, setup, settings, attacked)), "secure_sum",
            p["variant"], field_program=secure_sum_program(p["variant"]),
            field_inputs=first_call_inputs(out.result.views, out.result.sites, "secure_sum")),
        plots={"loss": lambda: plots.objective(curves, title, xlabel="iteration",
                                               ylabel="training loss")},
    )


def estimate(inp: EstimateInput) -> Workload:
    """One simulation of Algorithm 1: per iteration one SecureSum of 2·k·items elements
    (:func:`algorithms.nmf.corrective.declared_iteration_elements`) and the local updates."""
    p = inp.params
    k, items = p["k"], inp.n_cols
    sums = secure_sum_workload(p["variant"], inp.n_parties, 2 * k * items, p["iterations"])
    local = Workload(flops=10.0 * p["iterations"] * inp.n_rows * items * k,
                     working_bytes=8 * 4 * inp.n_rows * items)
    return (sums + local).described(
        f"{p['iterations']} SecureSums of 2k·items elements (declared cost)")


