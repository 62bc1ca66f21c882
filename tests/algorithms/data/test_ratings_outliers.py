"""Tests of the ratings CSV reader, planted outliers and the bundled digits (algorithms.data)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from algorithms.data import (
    bundled_dataset,
    load_ratings,
    plant_outliers,
    read_ratings_csv,
    unit_max_rows,
    write_movielens,
)
from protocols.errors import DataError, InputError, ScenarioError


def test_reads_user_item_rating_with_and_without_header(tmp_path: Path) -> None:
    body = "7,30,4\n2,10,5\n7,10,1.5\n\n2,31,3\n"
    for name, text in (("plain.csv", body), ("header.csv", "user,item,rating\n" + body),
                       ("ml.csv", "userId,movieId,rating,timestamp\n"
                        + body.replace("\n\n", "\n").replace("\n", ",99\n"))):
        (tmp_path / name).write_text(text)
        table = read_ratings_csv(tmp_path / name)
        assert table.user_ids.tolist() == [2, 7]
        assert table.movie_ids.tolist() == [10, 30, 31]
        expected = np.array([[5, np.nan, 3], [1.5, 4, np.nan]])
        np.testing.assert_array_equal(np.isnan(table.ratings), np.isnan(expected))
        np.testing.assert_array_equal(np.nan_to_num(table.ratings), np.nan_to_num(expected))


def test_load_ratings_picks_the_reader_by_suffix(tmp_path: Path) -> None:
    R = np.array([[5.0, np.nan], [2.0, 4.0]])
    write_movielens(tmp_path / "ratings.dat", R, user_ids=[3, 9], movie_ids=[1, 8])
    ds = load_ratings(tmp_path / "ratings.dat")
    assert ds.kind == "ratings" and ds.col_ids.tolist() == [1, 8]
    np.testing.assert_array_equal(np.nan_to_num(ds.X), np.nan_to_num(R))


@pytest.mark.parametrize(("text", "needle"), [
    ("", "no ratings"),
    ("user,item,rating\n", "no ratings"),
    ("1,2,3\n1,2\n", "line 2 has 2 fields"),
    ("1,2,3\n1,x,4\n", "line 2, field 2"),
    ("1,2,3\n-1,2,4\n", "line 2: user id -1"),
    ("1,2,3\n1,2.5,4\n", "item id 2.5"),
    ("1,2,3\n1,2,4\n", r"rates item 2 again \(first on line 1\)"),
    ("1,2,inf\n", "not a finite number"),
    ("name,movie,score\n1,2,3\n", "header"),
    ("1,2,3,4,5\n", "expected 3 or 4"),
])
def test_malformed_ratings_files_name_the_line(tmp_path: Path, text: str, needle: str) -> None:
    path = tmp_path / "r.csv"
    path.write_text(text)
    with pytest.raises(DataError, match=needle):
        read_ratings_csv(path)


def test_planted_outliers_follow_the_outlier_experiment() -> None:
    rng = np.random.default_rng(0)
    X = unit_max_rows(rng.uniform(0, 7, size=(200, 50)))
    assert np.allclose(X.max(axis=1), 1.0)
    out = plant_outliers(X, 0.1, 0.7, rng)
    assert out.rows.sum() == 20
    np.testing.assert_array_equal(out.X[~out.rows], X[~out.rows])  # others untouched
    changed = (out.X != X)[out.rows].mean()
    assert 0.55 < changed < 0.75  # 70% of entries hit, a few clipped back to an unchanged value
    assert out.X.min() >= 0 and out.X.max() <= 1
    np.testing.assert_array_equal(out.clean, X)
    with pytest.raises(ScenarioError):
        plant_outliers(X, 1.5, 0.7, rng)


def test_bundled_digits() -> None:
    ds = bundled_dataset("digits")
    assert ds.X.shape == (1797, 64) and ds.X.min() == 0 and ds.X.max() == 16
    with pytest.raises(InputError, match="unknown"):
        bundled_dataset("mnist")
