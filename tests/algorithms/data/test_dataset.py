"""Tests for algorithms.data: loading, checks, partitioning, splitting, synthetic inputs.

Expected values are written by hand (literal file text, literal arrays) or computed with numpy
independently of the code under test (e.g. ``np.array_split`` for the equal partition).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from algorithms.data import (
    UNIFORM_SUM_LIMIT,
    Dataset,
    check_finite,
    check_nonnegative,
    load_dataset,
    load_matrix,
    partition_rows,
    split_rows,
    synthetic_dataset,
    synthetic_matrix,
)
from protocols.errors import DataError, ScenarioError
from protocols.field import FixedPoint, prime_field


def _one_line(exc: pytest.ExceptionInfo[BaseException]) -> str:
    message = str(exc.value)
    assert "\n" not in message
    return message


# --------------------------------------------------------------------------------------------
# load_matrix: happy paths


def test_npy_round_trip_int_becomes_float(tmp_path: Path) -> None:
    expected = np.array([[1, 2, 3], [4, 5, 6]])
    np.save(tmp_path / "x.npy", expected)
    got = load_matrix(tmp_path / "x.npy")
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])


def test_npy_keeps_nan(tmp_path: Path) -> None:
    np.save(tmp_path / "x.npy", np.array([[1.0, np.nan], [np.inf, 0.0]]))
    got = load_matrix(str(tmp_path / "x.npy"))
    assert np.isnan(got[0, 1]) and np.isinf(got[1, 0])


def test_npz_single_array_and_named_keys(tmp_path: Path) -> None:
    a = np.array([[1.0, 2.0]])
    np.savez(tmp_path / "single.npz", whatever=a)
    np.testing.assert_array_equal(load_matrix(tmp_path / "single.npz"), a)
    np.savez(tmp_path / "named.npz", X=a, labels=np.array([0]))
    np.testing.assert_array_equal(load_matrix(tmp_path / "named.npz"), a)
    np.savez(tmp_path / "data.npz", data=a, ids=np.array([7]))
    np.testing.assert_array_equal(load_matrix(tmp_path / "data.npz"), a)
    np.savez(tmp_path / "pick.npz", first=a, second=2 * a)
    np.testing.assert_array_equal(load_matrix(tmp_path / "pick.npz", key="second"), 2 * a)


def test_npz_ambiguous_names_the_keys(tmp_path: Path) -> None:
    np.savez(tmp_path / "amb.npz", left=np.ones((2, 2)), right=np.zeros((2, 2)))
    with pytest.raises(DataError) as exc:
        load_matrix(tmp_path / "amb.npz")
    message = _one_line(exc)
    assert "'left'" in message and "'right'" in message and "amb.npz" in message
    np.savez(tmp_path / "both.npz", X=np.ones((2, 2)), data=np.zeros((2, 2)))
    with pytest.raises(DataError, match=r"'X'.*'data'"):
        load_matrix(tmp_path / "both.npz")
    with pytest.raises(DataError, match="no array 'nope'"):
        load_matrix(tmp_path / "both.npz", key="nope")


@pytest.mark.parametrize("make", [sp.csr_matrix, sp.csc_matrix, sp.csr_array, sp.coo_array])
def test_sparse_npz_loads_as_csr(tmp_path: Path, make: type) -> None:
    dense = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 3.0], [0.0, 0.0, 0.0]])
    sp.save_npz(tmp_path / "m.npz", make(dense))
    got = load_matrix(tmp_path / "m.npz")
    assert isinstance(got, sp.csr_array)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got.toarray(), dense)


def test_csv_with_header_and_blank_lines(tmp_path: Path) -> None:
    (tmp_path / "m.csv").write_text("alpha,beta,gamma\n1,2,3\n\n4.5, nan ,-6e1\n\n")
    got = load_matrix(tmp_path / "m.csv")
    expected = np.array([[1.0, 2.0, 3.0], [4.5, np.nan, -60.0]])
    np.testing.assert_array_equal(got, expected)
    ds = load_dataset(tmp_path / "m.csv")
    assert ds.vocabulary == ("alpha", "beta", "gamma")
    assert ds.kind == "matrix"


def test_csv_without_header(tmp_path: Path) -> None:
    (tmp_path / "m.csv").write_text("0.25\n0.5\n")
    np.testing.assert_array_equal(load_matrix(tmp_path / "m.csv"), [[0.25], [0.5]])


# --------------------------------------------------------------------------------------------
# load_matrix: errors


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DataError) as exc:
        load_matrix(tmp_path / "absent.npy")
    message = _one_line(exc)
    assert "absent.npy" in message and "no such file" in message


def test_directory_is_not_a_file(tmp_path: Path) -> None:
    (tmp_path / "dir.csv").mkdir()
    with pytest.raises(DataError, match="not a data file"):
        load_matrix(tmp_path / "dir.csv")


@pytest.mark.parametrize("name", ["m.txt", "m.json", "m"])
def test_wrong_suffix(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_text("1,2\n")
    with pytest.raises(DataError) as exc:
        load_matrix(tmp_path / name)
    message = _one_line(exc)
    assert "unsupported file type" in message and ".npy, .npz and .csv" in message


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("1,2,3\n4,5\n", "line 2 has 2 fields, expected 3"),
        ("a,b\n1,2\n3,4,5\n", "line 3 has 3 fields, expected 2"),
        ("1,2\n3,x\n", "line 2, field 2 is 'x', not a number"),
        ("1,2\n\n3,\n", "line 3, field 2 is an empty field"),
        ("", "is empty"),
        ("\n  \n", "is empty"),
        ("a,b\n", "header row but no data rows"),
    ],
)
def test_csv_errors_name_the_line(tmp_path: Path, text: str, needle: str) -> None:
    (tmp_path / "bad.csv").write_text(text)
    with pytest.raises(DataError) as exc:
        load_matrix(tmp_path / "bad.csv")
    message = _one_line(exc)
    assert needle in message and "bad.csv" in message


def test_csv_not_utf8(tmp_path: Path) -> None:
    (tmp_path / "bin.csv").write_bytes(b"1,2\n\xff\xfe,3\n")
    with pytest.raises(DataError, match="not UTF-8"):
        load_matrix(tmp_path / "bin.csv")


@pytest.mark.parametrize(
    ("array", "needle"),
    [
        (np.arange(3.0), "1-D array of shape (3,)"),
        (np.zeros((2, 2, 2)), "3-D array"),
        (np.array(4.0), "0-D array"),
        (np.zeros((0, 3)), "empty matrix of shape (0, 3)"),
        (np.zeros((3, 0)), "empty matrix of shape (3, 0)"),
        (np.array([["a", "b"]]), "holds strings"),
        (np.array([[1 + 2j]]), "holds complex numbers"),
    ],
)
def test_npy_bad_arrays(tmp_path: Path, array: np.ndarray, needle: str) -> None:
    np.save(tmp_path / "x.npy", array)
    with pytest.raises(DataError) as exc:
        load_matrix(tmp_path / "x.npy")
    message = _one_line(exc)
    assert needle in message and "x.npy" in message


def test_npy_pickled_objects_refused(tmp_path: Path) -> None:
    np.save(tmp_path / "o.npy", np.array([[{"a": 1}]], dtype=object), allow_pickle=True)
    with pytest.raises(DataError, match="Python objects"):
        load_matrix(tmp_path / "o.npy")


def test_corrupt_binary_files(tmp_path: Path) -> None:
    (tmp_path / "c.npy").write_bytes(b"not an npy file at all")
    with pytest.raises(DataError, match=r"not a readable \.npy"):
        load_matrix(tmp_path / "c.npy")
    (tmp_path / "c.npz").write_bytes(b"PK\x03\x04 truncated")
    with pytest.raises(DataError, match=r"c\.npz"):
        load_matrix(tmp_path / "c.npz")


def test_empty_npz_archive(tmp_path: Path) -> None:
    np.savez(tmp_path / "e.npz")
    with pytest.raises(DataError, match="holds no arrays"):
        load_matrix(tmp_path / "e.npz")


# --------------------------------------------------------------------------------------------
# checks


def test_check_finite_names_first_offender() -> None:
    X = np.array([[0.0, 1.0, 2.0], [3.0, 4.0, np.nan], [np.inf, 0.0, 0.0]])
    with pytest.raises(DataError) as exc:
        check_finite(X, "party 1's data")
    message = _one_line(exc)
    assert "party 1's data: row 1, column 2 holds nan" in message
    assert "2 non-finite" in message
    check_finite(np.ones((2, 2)))


def test_check_finite_sparse() -> None:
    X = sp.csr_array(
        (np.array([1.0, -np.inf, np.nan]), (np.array([0, 2, 3]), np.array([1, 0, 2]))),
        shape=(4, 3),
    )
    with pytest.raises(DataError, match=r"row 2, column 0 holds -inf"):
        check_finite(X)
    check_finite(sp.csr_array(np.eye(3)))


def test_check_nonnegative() -> None:
    X = np.array([[0.0, -0.5], [np.nan, -2.0]])
    with pytest.raises(DataError) as exc:
        check_nonnegative(X, "X")
    message = _one_line(exc)
    assert "row 0, column 1 holds -0.5" in message and "2 negative" in message
    check_nonnegative(np.array([[0.0, np.nan]]))  # NaN is check_finite's business
    S = sp.csr_array(np.array([[0.0, 1.0], [-3.0, 0.0]]))
    with pytest.raises(DataError, match=r"row 1, column 0 holds -3.0"):
        check_nonnegative(S)


# --------------------------------------------------------------------------------------------
# partitioning


def test_equal_partition_literal() -> None:
    assert partition_rows(10, 3) == [(0, 4), (4, 7), (7, 10)]
    assert partition_rows(9, 3, "equal") == [(0, 3), (3, 6), (6, 9)]
    assert partition_rows(4, 4) == [(0, 1), (1, 2), (2, 3), (3, 4)]
    assert partition_rows(7, 1) == [(0, 7)]


@pytest.mark.parametrize("n_rows", [5, 17, 100, 101])
@pytest.mark.parametrize("n_parties", [1, 2, 3, 5])
def test_equal_partition_matches_array_split(n_rows: int, n_parties: int) -> None:
    expected = [(int(c[0]), int(c[-1]) + 1) for c in np.array_split(np.arange(n_rows), n_parties)]
    assert partition_rows(n_rows, n_parties) == expected


def test_explicit_partition() -> None:
    assert partition_rows(10, 3, [2, 3, 5]) == [(0, 2), (2, 5), (5, 10)]
    assert partition_rows(3, 3, (1, 1, 1)) == [(0, 1), (1, 2), (2, 3)]
    assert partition_rows(6, 2, np.array([1, 5])) == [(0, 1), (1, 6)]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ((10, 3, [5, 5]), "lists 2 row counts but n_parties = 3"),
        ((10, 2, [4, 5]), "sum to 9 but the data has 10 rows"),
        ((10, 3, [5, 5, 0]), "partition[2] = 0"),
        ((10, 3, [5, -1, 6]), "partition[1] = -1"),
        ((10, 2, [4.5, 5.5]), "partition[0] = 4.5 must be a whole number"),
        ((10, 2, [True, 9]), "partition[0] = True"),
        ((2, 3, "equal"), "has 2 rows but n_parties = 3"),
        ((10, 3, "equals"), "'equals' is not recognised"),
        ((10, 0, "equal"), "n_parties = 0"),
        ((10, 2, 5), 'must be "equal" or a list'),
    ],
)
def test_partition_errors(args: tuple, needle: str) -> None:
    with pytest.raises(ScenarioError) as exc:
        partition_rows(*args)
    assert needle in _one_line(exc)


def test_split_rows_dense_copies() -> None:
    X = np.arange(20.0).reshape(5, 4)
    shards = split_rows(X, [(0, 2), (2, 3), (3, 5)])
    assert [s.shape for s in shards] == [(2, 4), (1, 4), (2, 4)]
    np.testing.assert_array_equal(shards[1], [[8.0, 9.0, 10.0, 11.0]])
    np.testing.assert_array_equal(np.vstack(shards), X)
    shards[0][0, 0] = -1.0
    assert X[0, 0] == 0.0  # a shard never aliases the full matrix


def test_split_rows_sparse() -> None:
    dense = np.array([[1.0, 0.0], [0.0, 2.0], [3.0, 0.0]])
    shards = split_rows(sp.csr_array(dense), partition_rows(3, 2))
    assert all(sp.issparse(s) for s in shards)
    np.testing.assert_array_equal(shards[0].toarray(), dense[:2])
    np.testing.assert_array_equal(shards[1].toarray(), dense[2:])


def test_split_rows_bad_range() -> None:
    with pytest.raises(ScenarioError, match=r"0 ≤ start ≤ stop ≤ 3"):
        split_rows(np.zeros((3, 2)), [(0, 2), (2, 4)])
    with pytest.raises(ScenarioError, match="pair"):
        split_rows(np.zeros((3, 2)), [(0, 1, 2)])


# --------------------------------------------------------------------------------------------
# Dataset, load_dataset


def test_dataset_validates_and_freezes_truth() -> None:
    with pytest.raises(DataError, match="vocabulary has 1 entries, expected 2"):
        Dataset(np.zeros((3, 2)), vocabulary=("a",))
    ds = Dataset(np.zeros((3, 2)), truth={"topics": np.ones((1, 2))})
    assert (ds.n_samples, ds.n_features) == (3, 2)
    with pytest.raises(TypeError):
        ds.truth["topics"] = np.zeros(1)  # type: ignore[index]


def test_load_dataset_uci_gives_tf_rows(tmp_path: Path) -> None:
    (tmp_path / "docword.tiny.txt").write_text("2\n3\n3\n1 1 1\n1 3 3\n2 2 5\n")
    (tmp_path / "vocab.tiny.txt").write_text("apple\nbanana\ncherry\n")
    ds = load_dataset(tmp_path / "docword.tiny.txt", vocab_path=tmp_path / "vocab.tiny.txt")
    assert ds.kind == "topics"
    np.testing.assert_allclose(ds.X.toarray(), [[0.25, 0.0, 0.75], [0.0, 1.0, 0.0]])
    assert ds.vocabulary == ("apple", "banana", "cherry")
    raw = load_dataset(tmp_path / "docword.tiny.txt", tf=False)
    np.testing.assert_array_equal(raw.X.toarray(), [[1, 0, 3], [0, 5, 0]])


def test_load_dataset_movielens(tmp_path: Path) -> None:
    (tmp_path / "ratings.dat").write_text("7::3::4::1\n9::3::2::2\n")
    ds = load_dataset(tmp_path / "ratings.dat")
    assert ds.kind == "ratings"
    np.testing.assert_array_equal(ds.X, [[4.0], [2.0]])
    np.testing.assert_array_equal(ds.row_ids, [7, 9])
    np.testing.assert_array_equal(ds.col_ids, [3])


def test_load_dataset_unsupported(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text("{}")
    with pytest.raises(DataError, match="unsupported data format 'json'"):
        load_dataset(tmp_path / "x.json")


# --------------------------------------------------------------------------------------------
# synthetic inputs


def test_uniform_is_nonnegative_bounded_and_seeded() -> None:
    X = synthetic_matrix(50, 7, np.random.default_rng(3))
    assert X.shape == (50, 7)
    assert X.min() >= 0.0 and X.max() < 1.0
    again = synthetic_matrix(50, 7, np.random.default_rng(3))
    np.testing.assert_array_equal(X, again)
    other = synthetic_matrix(50, 7, np.random.default_rng(4))
    assert not np.array_equal(X, other)
    scaled = synthetic_matrix(50, 7, np.random.default_rng(3), "uniform", high=10.0)
    np.testing.assert_allclose(scaled, 10.0 * X)


def test_uniform_column_sums_fit_the_61_bit_field() -> None:
    n_parties = 5
    X = synthetic_matrix(1000, 4, np.random.default_rng(0))
    fixed = FixedPoint(prime_field(2**61 - 1), 24)
    for start, stop in partition_rows(1000, n_parties):
        fixed.encode(X[start:stop].sum(axis=0), n_summands=n_parties)  # raises on overflow
    # the generator's limit leaves a wide margin inside the field's bound, which is
    # (2^60 − 1)/2^24, a hair below 2^36 = 256·UNIFORM_SUM_LIMIT
    assert UNIFORM_SUM_LIMIT * 255 <= fixed.bound(1)


def test_uniform_limit_refused() -> None:
    with pytest.raises(ScenarioError, match="lower rows or high"):
        synthetic_matrix(10, 2, np.random.default_rng(0), "uniform", high=2.0**28)


def test_synthetic_topics_and_ratings() -> None:
    ds = synthetic_dataset(40, 30, np.random.default_rng(1), "topics", k=3, doc_length=50)
    assert ds.kind == "topics" and ds.X.shape == (40, 30)
    np.testing.assert_allclose(ds.X.sum(axis=1), 1.0)
    assert ds.truth["topics"].shape == (3, 30) and ds.truth["weights"].shape == (40, 3)
    R = synthetic_matrix(30, 20, np.random.default_rng(1), "ratings", density=0.3)
    observed = R[~np.isnan(R)]
    assert set(np.unique(observed)) <= {1.0, 2.0, 3.0, 4.0, 5.0}


@pytest.mark.parametrize(
    ("kind", "params", "needle"),
    [
        ("gaussian", {}, "'gaussian' is not recognised"),
        ("uniform", {"k": 3}, "has no parameter 'k'"),
        ("topics", {"density": 0.1}, "has no parameter 'density'"),
        ("uniform", {"high": -1.0}, "high = -1.0 must be a finite number > 0"),
        ("topics", {"k": 0}, "k = 0 must be ≥ 1"),
    ],
)
def test_synthetic_errors(kind: str, params: dict, needle: str) -> None:
    with pytest.raises(ScenarioError) as exc:
        synthetic_matrix(10, 5, np.random.default_rng(0), kind, **params)
    assert needle in _one_line(exc)


def test_synthetic_rows_validated() -> None:
    with pytest.raises(ScenarioError, match="rows = 0"):
        synthetic_matrix(0, 5, np.random.default_rng(0))
