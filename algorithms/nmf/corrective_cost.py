"""Modelled cost of one iteration of corrective NMF (Ballen, seed 002, Algorithm 1), and a
common time budget turned into iterations per method.

Seed 002 gives every method "the same amount of time to run" (§3). Wall time would make a run
depend on the machine and break byte-identical replays, so time is modelled: the floating-point
operations one iteration of :func:`algorithms.nmf.corrective.corrective_nmf` needs, counted from
its own products, with the products restricted to the entries the mask Z can make non-zero.

With ``e`` such entries (every entry under replace-missing — V̄ is dense, Zhang et al. — and the
observed entries under ignore-missing — Z = 0 elsewhere, Mao & Saul), rank k, n users and m
items, one iteration costs

* step 1, W half: (Z∘V̄)Hᵀ and (Z∘(WH))Hᵀ, 2ek each, Z∘(WH) e, the update 3nk;
* WH on those entries after the W update, 2ek;
* step 1, H half: Wᵀ(Z∘V̄) and Wᵀ(Z∘(WH)), 2ek each, Z∘(WH) e, the update 3km;
* WH for the marking, 2ek;
* steps 2–3 (corrective modes only): the error, its square and the comparison with λ on every
  entry step 2 looks at, 3 per entry (the observed ones; every entry once the literal
  "fill once" reading has filled them).

That is 12ek + 2e + 3k(n + m) (+ 3 per marked entry). The dense implementation here performs
the same products on every entry; the model counts what an implementation that exploits the
mask performs, as the paper's remark that ignore-missing suits large sparse data implies.
The counts are a model, not a measurement: what they decide is each method's share of a
common budget, deterministically.
"""

from __future__ import annotations

from collections.abc import Mapping

from algorithms.nmf.corrective import CorrectiveSettings
from protocols.errors import InputError


def iteration_flops(settings: CorrectiveSettings, n_rows: int, n_items: int, k: int,
                    n_observed: int) -> int:
    """Modelled floating-point operations of one iteration of Algorithm 1 (module docstring).

    Parameters
    ----------
    settings : CorrectiveSettings
        The method (its ``missing`` rule decides the entries the products run on; its
        ``mode`` whether steps 2–3 run; ``fill`` which entries step 2 looks at).
    n_rows, n_items : int
        Users n and items m of V.
    k : int
        Rank.
    n_observed : int
        Observed entries of V.
    """
    for name, value in (("n_rows", n_rows), ("n_items", n_items), ("k", k)):
        if value < 1:
            raise InputError(f"{name} = {value} must be ≥ 1")
    if not 0 <= n_observed <= n_rows * n_items:
        raise InputError(f"n_observed = {n_observed} must lie in [0, {n_rows * n_items}]")
    dense = n_rows * n_items
    entries = dense if settings.missing == "replace" else n_observed
    flops = 12 * entries * k + 2 * entries + 3 * k * (n_rows + n_items)
    if settings.mode != "standard":
        once = settings.fill == "once" and settings.missing == "replace"
        flops += 3 * (dense if once else n_observed)
    return flops


def iterations_for_budget(costs: Mapping[str, int], iterations: int) -> dict[str, int]:
    """Iterations per method under a common modelled time: the costliest method runs
    ``iterations``, every other as many as fit in the same number of operations.

    Each method's modelled time ``iterations × cost`` then lies within one of its own
    iterations below the budget, so any two lie within the larger one-iteration cost of
    each other.

    Parameters
    ----------
    costs : mapping of str to int
        Method → modelled operations of one iteration (:func:`iteration_flops`), all > 0.
    iterations : int
        Iterations of the costliest method (≥ 1).
    """
    if iterations < 1:
        raise InputError(f"iterations = {iterations} must be ≥ 1")
    if not costs or min(costs.values()) <= 0:
        raise InputError("costs must name at least one method, each with a cost > 0")
    budget = iterations * max(costs.values())
    return {method: budget // cost for method, cost in costs.items()}
