"""Hyperband: hyper-parameter search by successive halving over iterations.

Thesis seed 001, §1.4, Algorithm 5 ("Hyper-parameter Optimization for Topic Modeling using
Hyperband"), after Li, Jamieson, DeSalvo, Rostamizadeh and Talwalkar, *Hyperband: A Novel
Bandit-Based Approach to Hyperparameter Optimization*, JMLR 18 (2017), Algorithm 1.

The resource is iterations of an iterative model. With a maximum of ``R`` iterations per
configuration and culling ratio ``η``, ``s_max = ⌊log_η R⌋`` and ``B = (s_max + 1) R``; bracket
``s = s_max, …, 0`` draws ``n = ⌈(B / R) η^s / (s + 1)⌉`` configurations and runs successive
halving on them: at rung ``i = 0, …, s`` the ``n_i = ⌊n η^{−i}⌋`` survivors run until
``r_i = R η^{i−s}`` iterations, are evaluated, and the best ``⌊n_i / η⌋`` go on
(:func:`bracket_schedule`). A bracket's last rung runs to ``R``.

As the thesis asks, models are saved and resumed: a survivor of rung ``i`` is trained from its
``r_{i−1}`` iterations to ``r_i``, so a configuration's iterations accumulate and the bracket
costs ``Σ_i n_i (r_i − r_{i−1})`` iterations rather than ``Σ_i n_i r_i`` (Li et al. count the
latter, without resuming). The thesis's Algorithm 5 is one bracket (``τb/η`` configurations
run ``η`` iterations, then the top ``1/η`` to ``η^{i+1}`` until ``τ``): :func:`successive_halving`
with ``n = τb/η``, ``r_0 = η`` and ``R = τ``. Configuration ``j`` of bracket ``s`` is drawn from
its own stream (label ``hyperband.config``, index ``(s, j)``), "seeded by i" as Algorithm 5
says, so enlarging ``R`` or the brackets re-draws the same configurations.

Departures: ``r_i`` is rounded to the nearest integer (at least 1) when ``R`` is not a power of
``η``; ties in the evaluation keep the configuration drawn first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import numpy as np

from protocols import seeds
from protocols.errors import InputError

C = TypeVar("C")
S = TypeVar("S")

Sample = Callable[[np.random.Generator], Any]
"""Draws one configuration from the search distribution D."""
Resume = Callable[[Any, Any, int, int], Any]
"""``resume(config, state, done, target)``: the model of ``config`` trained from ``done``
iterations (``state`` is ``None`` when ``done == 0``) until ``target``; returns the new state."""
Loss = Callable[[Any, Any], float]
"""``loss(config, state)``: the evaluation E of a saved model, lower is better."""


@dataclass(frozen=True)
class Rung:
    """One rung of a bracket: ``n`` configurations run until ``r`` iterations."""

    n: int
    r: int


@dataclass(frozen=True)
class Bracket:
    """Bracket ``s``: its rungs, from ``n`` configurations at ``r_0`` to the last at ``R``."""

    s: int
    rungs: tuple[Rung, ...]


def _check(R: int, eta: int) -> None:
    for name, value, low in (("R", R, 1), ("eta", eta, 2)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise InputError(f"{name} = {value!r} must be an integer ≥ {low}")


def s_max(R: int, eta: int) -> int:
    """``⌊log_η R⌋``, in integers (no floating-point logarithm)."""
    _check(R, eta)
    s = 0
    while eta ** (s + 1) <= R:
        s += 1
    return s


def bracket_schedule(R: int, eta: int = 3) -> tuple[Bracket, ...]:
    """Li et al.'s brackets ``s = s_max, …, 0`` with ``n_i = ⌊n η^{−i}⌋`` and
    ``r_i = R η^{i−s}`` (rounded, at least 1), ``n = ⌈(s_max + 1) η^s / (s + 1)⌉``."""
    top = s_max(R, eta)
    out = []
    for s in range(top, -1, -1):
        n = -(-(top + 1) * eta ** s // (s + 1))  # ⌈(B/R) η^s / (s+1)⌉ with B/R = s_max + 1
        rungs = tuple(Rung(n // eta ** i, max(1, round(R * eta ** (i - s))))
                      for i in range(s + 1))
        out.append(Bracket(s, rungs))
    return tuple(out)


def budget(schedule: tuple[Bracket, ...]) -> int:
    """Iterations the schedule trains with models resumed: ``Σ n_i (r_i − r_{i−1})``."""
    return sum(rung.n * (rung.r - (b.rungs[i - 1].r if i else 0))
               for b in schedule for i, rung in enumerate(b.rungs))


@dataclass
class Trial(Generic[C]):
    """One configuration: where it was drawn, how far it ran and its evaluation per rung."""

    bracket: int
    index: int
    config: C
    iterations: int = 0
    losses: list[tuple[int, float]] = field(default_factory=list)
    state: Any = None

    @property
    def loss(self) -> float:
        """The evaluation at the furthest rung reached."""
        return self.losses[-1][1]


@dataclass
class HyperbandResult:
    """Every trial of the search and the iterations it trained."""

    trials: list[Trial]
    iterations: int
    R: int
    eta: int

    def finalists(self, b: int | None = None) -> list[Trial]:
        """Trials that reached ``R``, best first (ties: drawn first); the first ``b`` if given."""
        done = [t for t in self.trials if t.iterations == self.R]
        done.sort(key=lambda t: t.loss)
        return done if b is None else done[:b]

    def best(self) -> Trial:
        """The trial with the lowest loss at ``R`` (Li et al. return the lowest seen)."""
        return self.finalists(1)[0]


def successive_halving(trials: list[Trial], rungs: tuple[Rung, ...], eta: int,
                       resume: Resume, loss: Loss) -> int:
    """Run ``trials`` through ``rungs`` in place, keeping the best ``⌊n_i / η⌋`` after each
    but the last; returns the iterations trained (each model resumed where it stopped)."""
    alive = list(trials)
    spent = 0
    for i, rung in enumerate(rungs):
        for t in alive:
            t.state = resume(t.config, t.state, t.iterations, rung.r)
            spent += rung.r - t.iterations
            t.iterations = rung.r
            t.losses.append((rung.r, float(loss(t.config, t.state))))
        if i + 1 < len(rungs):
            keep = rung.n // eta
            ranked = sorted(alive, key=lambda t: t.loss)  # stable: ties keep the draw order
            for t in ranked[keep:]:
                t.state = None  # culled: its saved model is no longer needed
            alive = ranked[:keep]
    return spent


def hyperband(sample: Sample, resume: Resume, loss: Loss, *, R: int, eta: int = 3,
              seed: int, keep_states: bool = True) -> HyperbandResult:
    """Li et al.'s Hyperband (thesis Algorithm 5 run in every bracket).

    Parameters
    ----------
    sample : callable
        ``sample(rng)`` draws a configuration from D.
    resume : callable
        ``resume(config, state, done, target)`` trains a saved model further (:data:`Resume`).
    loss : callable
        ``loss(config, state)``, the evaluation E; lower is better.
    R : int
        Maximum iterations per configuration, ≥ 1.
    eta : int
        Culling ratio η ≥ 2 (the thesis uses 3).
    seed : int
        Root of the configurations' streams (label ``hyperband.config``).
    keep_states : bool
        Keep the finalists' models in :attr:`Trial.state` (culled ones are always dropped).

    Returns
    -------
    HyperbandResult
    """
    trials: list[Trial] = []
    spent = 0
    for bracket in bracket_schedule(R, eta):
        drawn = [Trial(bracket.s, j, sample(seeds.rng(seed, "hyperband.config",
                                                      index=(bracket.s, j))))
                 for j in range(bracket.rungs[0].n)]
        spent += successive_halving(drawn, bracket.rungs, eta, resume, loss)
        trials.extend(drawn)
    if not keep_states:
        for t in trials:
            t.state = None
    return HyperbandResult(trials, spent, R, eta)
