"""Every curve of a figure stays visible, even where curves coincide.

``random_2x`` is ``random`` run for twice the sweeps from the same T0, so the two curves of
the initialisation comparison coincide over the first half; drawn alike, one hid the other.
The test renders the PNG and counts the pixels of each line's own colour.
"""

from __future__ import annotations

import io

import matplotlib
import matplotlib.image as mpimg
import numpy as np
from matplotlib.colors import to_rgb

from sim import plots
from sim.report import png_bytes


def pixels_of(figure, colors: list[str]) -> list[int]:
    image = mpimg.imread(io.BytesIO(png_bytes(figure)))[..., :3]
    return [int(np.sum(np.all(np.abs(image - np.array(to_rgb(c))) < 0.04, axis=-1)))
            for c in colors]


def coinciding_curves() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(4)
    base = np.cumsum(rng.uniform(-1.0, 0.0, size=(3, 15)), axis=1) + 100.0
    longer = np.hstack([base, base[:, -1:] + np.cumsum(rng.uniform(-0.5, 0.0, (3, 15)), 1)])
    other = base - 3.0
    return {"random": base, "random_2x": longer, "nndsvd": other, "pd_nmf_init": other + 1}


def test_coinciding_curves_of_the_bands_plot_are_all_visible():
    figure = plots.objective_bands(coinciding_curves(), "initialisations")
    colors = [line.get_color() for line in figure.axes[0].lines]
    assert len(colors) == 4 and len(set(colors)) == 4
    counts = pixels_of(figure, colors)
    assert min(counts) > 100, dict(zip(coinciding_curves(), counts, strict=True))


def test_coinciding_curves_of_the_objective_plot_are_all_visible():
    values = list(np.linspace(10.0, 1.0, 30))
    figure = plots.objective({"pd_nmf": values, "rri_nmf": values}, "PD-NMF")
    colors = [line.get_color() for line in figure.axes[0].lines]
    assert min(pixels_of(figure, colors)) > 100


def test_the_pixel_count_sees_a_hidden_line():
    """Planted: two identical solid lines of one width; the first is covered entirely."""
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, ax = plt.subplots(figsize=(6.0, 4.0))
    x = np.arange(1, 31)
    ax.plot(x, 100.0 - x, color="tab:blue", linewidth=1.5)
    ax.plot(x, 100.0 - x, color="tab:orange", linewidth=1.5)
    hidden, top = pixels_of(figure, ["tab:blue", "tab:orange"])
    assert hidden < 20 < top
