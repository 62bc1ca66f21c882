"""Random sketching matrices for DSANLS and secure NMF (Qian et al., seed 004, §3.4).

A sketch is a random S ∈ R^{n×d}, d ≤ n, that multiplies a matrix with n columns from the right
(A ↦ AS, shape r×d). Assumption 1 of the paper asks E[SSᵀ] = I and bounded variance; then the
sketched gradient is an unbiased estimate of the true one (Eq. 16), which is what Theorem 1's
convergence rests on.

``gaussian``
    i.i.d. N(0, 1/d) entries: E[SSᵀ] = I. Forming AS costs 2·r·n·d flops.
``subsampling``
    d distinct columns e_i of the identity, drawn uniformly without replacement, **scaled by
    sqrt(n/d)**. The paper's unscaled columns give E[SSᵀ] = (d/n)·I, not I (digest §7.4 item
    57): with the scale, SSᵀ = (n/d)·diag(1[i sampled]) and P(i sampled) = d/n. Forming AS
    copies r·d entries (counted as r·d flops) and keeps sparsity.

The paper names S both n×d and d×n; here it is always n×d (it multiplies from the right; a
left sketch S_2 of Algorithm 5 is Sᵀ of an m×d' sketch).

All nodes obtain the same S^t without communicating it: they share one seed (broadcast once by
node 0, Algorithm 2 line 2: :func:`shared_seed`, whose value every node records as a declared
output) and draw each matrix from its own stream,
the registered stream ``dsanls.sketch`` of that seed at index ``(purpose, t[, node])``
(:func:`protocols.seeds.rng`) — so a sketch of any iteration can be
regenerated on its own, in any order (the M-recovery attack of Theorem 3 does exactly that from
a coalition's view).
"""

from __future__ import annotations

import math
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

import numpy as np

from protocols import seeds
from protocols.context import PartyContext
from protocols.effects import Output, Recv, SendEach
from protocols.errors import InputError

SKETCHES: tuple[str, ...] = ("gaussian", "subsampling")

# purposes of the shared sketch streams (the first element of the spawn key)
SKETCH_S = 0  # S^t ∈ R^{n×d}: the U-subproblem of DSANLS ("sketch on V")
SKETCH_S_PRIME = 1  # S'^t ∈ R^{m×d'}: the V-subproblem of DSANLS; S_2ᵀ of Syn-SSD ("on U")
SKETCH_S1 = 2  # S_1^t ∈ R^{|J_r|×d}: Syn-SSD's local sketch of node r's columns


def check_kind(kind: str) -> str:
    """``kind`` if it is one of :data:`SKETCHES`, else an InputError naming them."""
    if kind not in SKETCHES:
        raise InputError(f"sketch = {kind!r} is unknown; use one of {', '.join(SKETCHES)}")
    return kind


def check_sketch_size(d: int, n: int, what: str = "sketch_size") -> int:
    """``d`` if 1 ≤ d ≤ n, else an InputError: a sketch cannot be larger than what it sketches."""
    if isinstance(d, bool) or not isinstance(d, int | np.integer):
        raise InputError(f"{what} = {d!r} must be an integer")
    if not 1 <= d <= n:
        raise InputError(
            f"{what} = {d} must be between 1 and the dimension it sketches, {n}; "
            f"choose at most {n} (the paper uses about a tenth of it)"
        )
    return int(d)


SketchSize = int | float
"""A sketch size: a number of columns (int ≥ 1), or a fraction in (0, 1] of the dimension."""


def check_size_spec(size: SketchSize, what: str = "sketch_size") -> SketchSize:
    """``size`` if it is an integer ≥ 1 or a fraction in (0, 1], else an InputError."""
    if isinstance(size, bool) or not isinstance(size, int | float | np.integer | np.floating):
        raise InputError(f"{what} = {size!r} must be a number of columns (an integer ≥ 1) or "
                         "a fraction in (0, 1] of the dimension it sketches")
    if isinstance(size, int | np.integer):
        if size < 1:
            raise InputError(f"{what} = {size} must be ≥ 1")
        return int(size)
    if not 0 < size <= 1:
        raise InputError(f"{what} = {size} must be an integer number of columns ≥ 1 or a "
                         "fraction in (0, 1] of the dimension it sketches")
    return float(size)


def sketch_columns(size: SketchSize, n: int, what: str = "sketch_size") -> int:
    """The sketch's d for a dimension n: ``size`` itself (≤ n), or ⌈size·n⌉ for a fraction.

    Raises
    ------
    InputError
        If an integer size exceeds n, or the size is neither an integer ≥ 1 nor in (0, 1].
    """
    size = check_size_spec(size, what)
    if isinstance(size, float):
        return max(1, math.ceil(size * n - 1e-9))
    return check_sketch_size(size, n, what)


@dataclass(frozen=True)
class Sketch:
    """One random S ∈ R^{n×d} with E[SSᵀ] = I.

    Attributes
    ----------
    kind : {"gaussian", "subsampling"}
    n, d : int
        S has shape (n, d).
    matrix : ndarray of shape (n, d) or None
        The entries (Gaussian sketches).
    indices : ndarray of shape (d,) or None
        The sampled rows i, column j of S being sqrt(n/d)·e_{indices[j]} (subsampling).
    """

    kind: str
    n: int
    d: int
    matrix: np.ndarray | None = None
    indices: np.ndarray | None = None

    @property
    def scale(self) -> float:
        """sqrt(n/d), the scale of a subsampling sketch's non-zero entries."""
        return math.sqrt(self.n / self.d)

    def dense(self) -> np.ndarray:
        """S as an (n, d) array."""
        if self.matrix is not None:
            return self.matrix
        out = np.zeros((self.n, self.d))
        out[self.indices, np.arange(self.d)] = self.scale
        return out

    def apply(self, A: np.ndarray, start: int = 0) -> np.ndarray:
        """A·S[start : start + c] for A of shape (r, c): the product with a block of S's rows.

        With ``start = 0`` and c = n this is AS. A node holding the columns J_r = [start,
        start + c) of a matrix computes its summand of AS = Σ_r A_{:J_r} S_{J_r} this way
        (Eq. 11).
        """
        A = np.asarray(A, dtype=np.float64)
        c = A.shape[1]
        if not 0 <= start <= start + c <= self.n:
            raise InputError(f"rows [{start}, {start + c}) are outside the sketch's {self.n}")
        if self.matrix is not None:
            return A @ self.matrix[start : start + c]
        out = np.zeros((A.shape[0], self.d))
        picked = (self.indices >= start) & (self.indices < start + c)
        out[:, picked] = self.scale * A[:, self.indices[picked] - start]
        return out

    def apply_flops(self, rows: int, cols: int, start: int = 0) -> int:
        """Flops of :meth:`apply` on an (rows, cols) block: 2·r·c·d, or r per copied column."""
        if self.indices is None:
            return 2 * rows * cols * self.d
        picked = int(np.count_nonzero((self.indices >= start) & (self.indices < start + cols)))
        return rows * picked

    @property
    def draw_flops(self) -> int:
        """Random numbers drawn to make S: n·d (Gaussian) or d (subsampling)."""
        return self.n * self.d if self.matrix is not None else self.d


def draw_sketch(kind: str, n: int, d: int, rng: np.random.Generator) -> Sketch:
    """A fresh sketch S ∈ R^{n×d} of the given kind from ``rng``.

    Raises
    ------
    InputError
        If the kind is unknown or d is not in [1, n].
    """
    check_kind(kind)
    check_sketch_size(d, n)
    if kind == "gaussian":
        return Sketch(kind, n, d, matrix=rng.standard_normal((n, d)) / math.sqrt(d))
    return Sketch(kind, n, d, indices=rng.choice(n, size=d, replace=False))


def stream_rng(seed: int, purpose: int, t: int, node: int | None = None) -> np.random.Generator:
    """The generator of a shared stream: ``dsanls.sketch`` of ``seed`` at ``(purpose, t[, node])``
    (:func:`protocols.seeds.rng`)."""
    key = (purpose, t) if node is None else (purpose, t, node)
    return seeds.rng(seed, "dsanls.sketch", index=key)


@dataclass(frozen=True)
class SketchStream:
    """The sketches every node derives from the shared seed (Algorithm 2, lines 2, 4, 10).

    Parameters
    ----------
    seed : int
        The broadcast seed.
    kind : {"gaussian", "subsampling"}
    """

    seed: int
    kind: str

    def __post_init__(self) -> None:
        check_kind(self.kind)

    def draw(self, purpose: int, t: int, n: int, d: int, node: int | None = None) -> Sketch:
        """The sketch of ``purpose`` at iteration ``t`` (and ``node``, for local sketches)."""
        return draw_sketch(self.kind, n, d, stream_rng(self.seed, purpose, t, node))


SEED_PROTOCOL = "sketch_seed"


def shared_seed(ctx: PartyContext, root: int = 0) -> Generator[Any, Any, int]:
    """Party program: ``root`` draws the sketch seed and sends it to every other data holder.

    Algorithm 2, line 2 ("Broadcast the random seed"). One message of one element per peer.
    Every party records the seed as the declared output ``sketch_seed``: from it anyone can
    regenerate every sketch of the run.
    """
    call = ctx.new_call(SEED_PROTOCOL)
    if ctx.party == root:
        seed = int(ctx.rng.integers(0, np.iinfo(np.int64).max))
        payload = np.array([seed], dtype=np.int64)
        yield SendEach(dict.fromkeys(ctx.peers, payload), call, "seed")
    else:
        received = yield Recv(root, call, "seed")
        seed = int(np.asarray(received)[0])
    yield Output("sketch_seed", seed, call)
    return seed
