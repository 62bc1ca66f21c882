"""The PNG figures that scenarios write (matplotlib, headless).

Each function builds one figure and returns it; :func:`sim.report.png_bytes` renders it.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def _axes(figsize: tuple[float, float] = (6.0, 4.0)) -> tuple[Any, Any]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=figsize)
    ax.grid(alpha=0.3)
    return fig, ax


STYLES = (("-", 3.2), ("--", 2.2), ("-.", 1.6), (":", 1.4))
"""(line style, width) of the 1st, 2nd, ... curve of a figure: later curves are drawn on top,
thinner and broken, so that curves which coincide (``random`` is ``random_2x`` for the first
half of its sweeps) all stay visible."""


def _style(i: int) -> dict[str, Any]:
    style, width = STYLES[i % len(STYLES)]
    return {"linestyle": style, "linewidth": width, "zorder": 2 + i}


def objective(curves: dict[str, list[float]], title: str, *, xlabel: str = "sweep",
              ylabel: str = "objective E(W, T)") -> Any:
    """Objective against sweep, one line per curve (``pd_nmf``, ``rri_nmf``)."""
    fig, ax = _axes()
    for i, (name, values) in enumerate(curves.items()):
        ax.plot(np.arange(1, len(values) + 1), values, label=name, **_style(i))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend()
    return fig


def objective_bands(curves: dict[str, np.ndarray], title: str) -> Any:
    """Mean objective ± one standard deviation of the mean over trials (thesis Figs. 2.4/2.5).

    ``curves`` maps a label to a trials × sweeps array.
    """
    fig, ax = _axes((6.5, 4.2))
    for i, (label, h) in enumerate(curves.items()):
        x = np.arange(1, h.shape[1] + 1)
        mean = h.mean(axis=0)
        sem = h.std(axis=0, ddof=1) / np.sqrt(h.shape[0]) if h.shape[0] > 1 else 0 * mean
        (line,) = ax.plot(x, mean, label=label, **_style(i))
        ax.fill_between(x, mean - sem, mean + sem, alpha=0.2, color=line.get_color(),
                        zorder=1)
    ax.set_xlabel("sweep of PD-NMF-Iter")
    ax.set_ylabel("objective E(W, T)  (mean ± sd of the mean)")
    ax.set_title(title)
    ax.legend()
    return fig


def uplift(parties: list[dict[str, Any]], measure: str, k: int) -> Any:
    """Each party's learning uplift against its size (thesis Fig. 3.7 a, b)."""
    fig, ax = _axes()
    sizes = [100 * q["size_fraction"] for q in parties]
    values = [q["uplift_pct"] for q in parties]
    ax.scatter(sizes, values)
    for q, x, y in zip(parties, sizes, values, strict=True):
        ax.annotate(str(q["party"]), (x, y), textcoords="offset points", xytext=(4, 4))
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.set_xlabel("party size (% of training rows)")
    ax.set_ylabel(f"uplift: % decrease of {measure}")
    ax.set_title(f"learning uplift from PD-NMF (k = {k})")
    return fig


def convergence(curves: dict[str, list[float]], title: str) -> Any:
    """Largest principal angle (radians, log scale) against iteration, one line per curve."""
    fig, ax = _axes()
    for name, values in curves.items():
        ax.semilogy(np.arange(1, len(values) + 1), np.maximum(values, 1e-17), label=name)
    ax.set_xlabel("iteration")
    ax.set_ylabel("largest principal angle to numpy's V_k (rad)")
    ax.set_title(title, fontsize=9)
    ax.legend()
    return fig


def collusion(findings: list[dict[str, Any]], threshold: int) -> Any:
    """CAPE: noise left on an honest site's release / τ² against the colluding sites c."""
    fig, ax = _axes()
    c = [f["colluding_sites"] for f in findings]
    for key, label, style in (("view_only", "view only", "o"),
                              ("side_information", "with side information", "s")):
        ax.plot(c, [f[f"{key}_analytic"] / f["tau2"] for f in findings], "-", lw=1,
                label=f"{label} (theory)")
        ax.plot(c, [(f[key] or float("nan")) / f["tau2"] for f in findings], style,
                label=f"{label} (from the views)")
    ax.axhline(1.0, color="grey", lw=0.8, ls="--", label="τ² (the site's own guarantee)")
    ax.axvline(threshold + 0.5, color="red", lw=0.8, ls=":", label="paper: c ≤ ⌈S/3⌉ − 1")
    ax.set_xlabel("colluding sites c (with the aggregator)")
    ax.set_ylabel("residual noise variance / τ²")
    ax.set_title("CAPE: noise left on an honest site's release")
    ax.legend(fontsize=7)
    return fig


def sweep(x: list[float], curves: dict[str, list[float]], xlabel: str, ylabel: str, title: str,
          logx: bool = True, reference: dict[str, float] | None = None) -> Any:
    """One line per method against a swept parameter (seed 003, Figures 2–5)."""
    fig, ax = _axes((6.5, 4.2))
    for name, values in curves.items():
        ax.plot(x, values, "o-", label=name)
    for name, value in (reference or {}).items():
        ax.axhline(value, color="grey", lw=0.8, ls="--", label=name)
    if logx:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=8)
    return fig


def objective_vs_epsilon(epsilons: list[float], private: np.ndarray, nonprivate: float,
                         initial: float, title: str) -> Any:
    """DP objective against ε per release (seed 000, Figs. 4–8): mean ± sd over trials
    (``private`` is trials × len(epsilons)), with the non-private and the initial levels."""
    fig, ax = _axes()
    mean = private.mean(axis=0)
    sd = private.std(axis=0, ddof=1) if private.shape[0] > 1 else np.zeros_like(mean)
    ax.errorbar(epsilons, mean, yerr=sd, marker="o", capsize=3, label="private (mean ± sd)")
    ax.axhline(nonprivate, color="C2", ls="--", label="non-private")
    ax.axhline(initial, color="grey", ls=":", label="initial (W0, H0)")
    ax.set_xlabel("ε per release")
    ax.set_ylabel("Objective Value (1/2N)‖V° − WH‖²")
    ax.set_title(title, fontsize=9)
    ax.legend()
    return fig


def grouped_bars(groups: list[str], series: dict[str, list[float]], ylabel: str,
                 title: str, errors: dict[str, list[float]] | None = None,
                 bottom: float | None = None) -> Any:
    """One group of bars per row label, one bar per series (e.g. clean / attacked);
    ``errors``: an error bar (e.g. one standard deviation) per bar of a series; ``bottom``:
    where the value axis starts (to show small differences between tall bars)."""
    fig, ax = _axes((7.0, 4.2))
    width = 0.8 / max(len(series), 1)
    x = np.arange(len(groups))
    for i, (label, values) in enumerate(series.items()):
        err = None if errors is None else errors.get(label)
        ax.bar(x + (i - (len(series) - 1) / 2) * width, values, width, label=label, yerr=err,
               capsize=3 if err is not None else 0)
    ax.set_xticks(x, groups, rotation=15, fontsize=8)
    if bottom is not None:
        ax.set_ylim(bottom=bottom)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.legend(loc="best", fontsize=8, framealpha=0.9)
    return fig


def relative_error(panels: dict[str, tuple[str, dict[str, tuple[Any, Any]]]]) -> Any:
    """Relative error ‖M − UVᵀ‖_F/‖M‖_F against iterations or simulated time (seed 004,
    Figs. 2, 5–7): one panel per ``{title: (x label, curves)}``, side by side with a shared y
    axis, one step line per curve ``{label: (x, errors)}``.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(panels), figsize=(6.0 * len(panels), 4.2), sharey=True,
                             squeeze=False)
    for ax, (title, (xlabel, curves)) in zip(axes[0], panels.items(), strict=True):
        ax.grid(alpha=0.3)
        for label, (x, y) in curves.items():
            ax.plot(x, y, label=label, drawstyle="steps-post")
        ax.set_xlabel(xlabel)
        ax.set_yscale("log")
        ax.set_title(title)
        ax.legend(fontsize="small")
    axes[0][0].set_ylabel("relative error ‖M − UVᵀ‖_F / ‖M‖_F")
    return fig
