"""Row blocks: the rows of X that one party holds (or, centrally, all of X), ready for RRI.

The per-topic steps of RRI-NMF (:mod:`algorithms.nmf.rri_steps`) read the data through a row
block, so that the centralized reference and every party of PD-NMF run the same code on their
rows. Two losses (thesis seed 001, Eq. 2.28; digest §7.1 item 32):

* ``"full"`` (:class:`FullRows`): ½‖X − WT‖²_F over every entry; X dense or CSR.
* ``"observed"`` (:class:`ObservedRows`): only the observed entries count — NaN marks an
  unobserved rating in a dense X; for a sparse X the stored entries are the observed ones.

:func:`zero_filled` and :func:`observed_mask` are the two views of a matrix with unobserved
entries that the initialisations need (NNDSVD reads unobserved entries as 0; WR-NMF weighs
representatives by the 0/1 mask Ψ of Corollary 4).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from protocols.errors import DataError, InputError

__all__ = [
    "LOSSES",
    "FullRows",
    "Loss",
    "ObservedRows",
    "RowBlock",
    "as_row_block",
    "check_factors",
    "observed_mask",
    "zero_filled",
]

Loss = Literal["full", "observed"]
FloatArray = NDArray[np.float64]

LOSSES = ("full", "observed")


@dataclass(frozen=True, eq=False)
class FullRows:
    """Rows of X under the plain squared loss.

    Attributes
    ----------
    X : ndarray or scipy.sparse CSR matrix of shape (n_rows, d)
        Non-negative, finite, float64.

    Steps 1 and 3 of every topic multiply by X and by Xᵀ (:meth:`times`,
    :meth:`transposed_times_into`). For a CSR X they call scipy's compiled kernels
    (``csr_matvec``, and ``csc_matvec`` on the same arrays for Xᵀ) directly: the very calls
    ``X @ v`` and ``X.T @ w`` end in, so the products are the same bits, without scipy's
    operator dispatch (about 14 µs a product, paid twice per topic by every party of PD-NMF,
    where the central run pays it once). Where that module or its kernels are missing (scipy
    keeps them private), the operators are used.
    """

    X: FloatArray | sp.csr_matrix | sp.csr_array
    loss: Loss = field(default="full", init=False)
    XT: Any = field(init=False, repr=False)
    """Xᵀ, built once: for a CSR X, the CSC view of the same arrays (no copy). Step 3 of every
    topic multiplies by it, and scipy's ``X.T`` builds a new matrix object on each call (about
    50 µs, paid k times per sweep by every party of PD-NMF)."""
    _kernels: tuple[Any, Any] | None = field(init=False, repr=False, default=None)

    def __post_init__(self) -> None:
        object.__setattr__(self, "XT", self.X.T)
        object.__setattr__(self, "_kernels", _csr_kernels(self.X))

    @property
    def shape(self) -> tuple[int, int]:
        """(n_rows, d)."""
        return (int(self.X.shape[0]), int(self.X.shape[1]))

    def times(self, v: FloatArray) -> FloatArray:
        """X v, a new float64 vector of length n_rows (``v``: a float64 vector of length d)."""
        kernels = self._kernels
        if kernels is None:
            return np.asarray(self.X @ v, dtype=np.float64).ravel()
        X = self.X
        n_rows, d = X.shape
        out = np.zeros(n_rows)
        kernels[0](n_rows, d, X.indptr, X.indices, X.data, v, out)
        return out

    def transposed_times_into(self, w: FloatArray, out: FloatArray) -> None:
        """Write Xᵀ w into ``out`` (a float64 vector of length d, contiguous; ``w``: n_rows)."""
        kernels = self._kernels
        if kernels is None:
            out[:] = np.asarray(self.XT @ w, dtype=np.float64).ravel()
            return
        X = self.X
        n_rows, d = X.shape
        out[:] = 0.0
        kernels[1](d, n_rows, X.indptr, X.indices, X.data, w, out)


def _csr_kernels(X: Any) -> tuple[Any, Any] | None:
    """scipy's ``(csr_matvec, csc_matvec)`` when ``X`` is a float64 CSR matrix they take as it
    is (matching int32/int64 index arrays), else None (the operators are used)."""
    if not (sp.issparse(X) and X.format == "csr" and X.dtype == np.float64
            and X.indices.dtype == X.indptr.dtype
            and X.indptr.dtype in (np.dtype(np.int32), np.dtype(np.int64))):
        return None
    try:
        from scipy.sparse import _sparsetools
    except ImportError:  # a scipy that reorganised its private kernels
        return None
    csr_matvec = getattr(_sparsetools, "csr_matvec", None)
    csc_matvec = getattr(_sparsetools, "csc_matvec", None)
    if csr_matvec is None or csc_matvec is None:
        return None
    return csr_matvec, csc_matvec


@dataclass(frozen=True, eq=False)
class ObservedRows:
    """Rows of X under the observed-entries loss: the observed entries in coordinate form.

    Attributes
    ----------
    rows, cols : ndarray of int64, shape (n_obs,)
        Row and column index of every observed entry (row-major order).
    values : ndarray of float64, shape (n_obs,)
        The observed values (finite, non-negative).
    n_rows, n_cols : int
        Shape of the block.
    """

    rows: NDArray[np.int64]
    cols: NDArray[np.int64]
    values: FloatArray
    n_rows: int
    n_cols: int
    loss: Loss = field(default="observed", init=False)

    @property
    def shape(self) -> tuple[int, int]:
        """(n_rows, d)."""
        return (self.n_rows, self.n_cols)


RowBlock = FullRows | ObservedRows


def as_row_block(
    X: ArrayLike | sp.spmatrix | sp.sparray | RowBlock,
    loss: Literal["auto", "full", "observed"] = "auto",
) -> RowBlock:
    """Validate rows of X and wrap them for the per-topic steps.

    Parameters
    ----------
    X : array_like of shape (n_rows, d), scipy.sparse matrix, or a RowBlock
        Non-negative data. A dense array may hold NaN for unobserved entries (observed loss).
    loss : {"auto", "full", "observed"}
        ``"auto"``: observed if X is dense and holds a NaN, full otherwise. ``"observed"`` with
        a sparse X takes the stored entries as the observed ones.

    Returns
    -------
    FullRows or ObservedRows

    Raises
    ------
    InputError
        On an unknown ``loss`` or a non-2-D X.
    DataError
        On infinite or negative entries, or NaN under ``loss="full"``.
    """
    if loss not in ("auto", *LOSSES):
        raise InputError(f"loss {loss!r} is not one of ('auto', 'full', 'observed')")
    if isinstance(X, (FullRows, ObservedRows)):
        if loss != "auto" and loss != X.loss:
            raise InputError(f"loss {loss!r} does not match the given {X.loss!r} row block")
        return X
    if sp.issparse(X):
        if X.ndim != 2:
            raise InputError(f"X has {X.ndim} dimensions; allowed: 2")
        csr = sp.csr_matrix(X, dtype=np.float64)
        if not csr.has_canonical_format:  # canonicalise a copy, never the caller's arrays
            csr = csr.copy()
            csr.sum_duplicates()
        data = csr.data
        if not np.all(np.isfinite(data)):
            raise DataError("X holds NaN or infinite stored entries; allowed: finite values")
        if data.size and data.min() < 0:
            raise DataError(f"X holds a negative entry {data.min()!r}; allowed: >= 0")
        if loss == "observed":
            coo = csr.tocoo()
            return ObservedRows(
                coo.row.astype(np.int64),
                coo.col.astype(np.int64),
                coo.data.astype(np.float64),
                int(csr.shape[0]),
                int(csr.shape[1]),
            )
        return FullRows(csr)
    arr = np.asarray(X, dtype=np.float64)
    if arr.ndim != 2:
        raise InputError(f"X has {arr.ndim} dimensions (shape {arr.shape}); allowed: 2")
    nan = np.isnan(arr)
    has_nan = bool(nan.any())
    if np.isinf(arr).any():
        raise DataError("X holds an infinite entry; allowed: finite values (NaN = unobserved)")
    finite_min = np.nanmin(arr) if arr.size and not nan.all() else 0.0
    if finite_min < 0:
        raise DataError(f"X holds a negative entry {finite_min!r}; allowed: >= 0")
    if loss == "full" and has_nan:
        raise DataError(
            "X holds NaN entries under loss='full'; use loss='observed' (or 'auto')"
            " to exclude unobserved entries from the loss"
        )
    if loss == "observed" or (loss == "auto" and has_nan):
        rows, cols = np.nonzero(~nan)
        return ObservedRows(
            rows.astype(np.int64),
            cols.astype(np.int64),
            arr[rows, cols],
            int(arr.shape[0]),
            int(arr.shape[1]),
        )
    return FullRows(arr)


def check_factors(
    shape: tuple[int, int], W: ArrayLike, T: ArrayLike
) -> tuple[FloatArray, FloatArray]:
    n, d = shape
    Wa = np.array(W, dtype=np.float64, copy=True)
    Ta = np.array(T, dtype=np.float64, copy=True)
    if Ta.ndim != 2 or Ta.shape[1] != d or Ta.shape[0] < 1:
        raise InputError(f"T has shape {Ta.shape}; allowed: (k, {d}) with k >= 1")
    if Wa.shape != (n, Ta.shape[0]):
        raise InputError(f"W has shape {Wa.shape}; allowed: ({n}, {Ta.shape[0]})")
    for name, arr in (("W", Wa), ("T", Ta)):
        if not np.all(np.isfinite(arr)):
            raise InputError(f"{name} holds NaN or infinite entries; allowed: finite values")
        if arr.size and arr.min() < 0:
            raise InputError(f"{name} holds a negative entry {arr.min()!r}; allowed: >= 0")
    return Wa, Ta


def zero_filled(X: Any) -> Any:
    """X with unobserved (NaN) entries read as 0: dense float64, or a sparse X unchanged.

    Parameters
    ----------
    X : array_like of shape (n, d) or scipy.sparse matrix

    Returns
    -------
    ndarray of float64 of shape (n, d), or the sparse X itself
    """
    if sp.issparse(X):
        return X
    arr = np.asarray(X, dtype=np.float64)
    return np.where(np.isnan(arr), 0.0, arr)


def observed_mask(X: Any) -> FloatArray:
    """The 0/1 mask Ψ of observed entries: non-NaN cells (dense), stored entries (sparse).

    Parameters
    ----------
    X : array_like of shape (n, d) or scipy.sparse matrix

    Returns
    -------
    ndarray of float64 of shape (n, d)
    """
    if sp.issparse(X):
        mask = sp.csr_array(X, copy=True)
        mask.data[:] = 1.0
        return mask.toarray()
    return (~np.isnan(np.asarray(X, dtype=np.float64))).astype(np.float64)
