"""Data for a scenario: the one place that reads files, generates data and splits it by party.

Import from here — ``from algorithms.data import load_dataset, partition_rows`` — rather than
from the modules below, which may move:

==================  ===========================================================================
``dataset``         :class:`Dataset` and :func:`load_dataset` (any supported file)
``matrix_files``    ``.npy``, ``.npz`` and ``.csv`` matrices (:func:`load_matrix`)
``uci``             UCI bag-of-words corpora (``docword.*.txt``, ``vocab.*.txt``), TF rows
``movielens``       MovieLens ``ratings.dat``
``ratings_csv``     ``user,item,rating`` CSV files; :func:`load_ratings` for either ratings layout
``outliers``        planted outliers (seed 000's contamination) and unit-maximum rows
``profile_injection``  seed 002's profile injection, converted users and random flips
``text_files``      line-numbered parsing of numeric text, shared by the readers above
``synthetic``       synthetic topic corpora, ratings and uniform data
``movielens_like``  synthetic ratings shaped like MovieLens 1M (seed 002's stand-in)
``mnist_like``      synthetic sparse images shaped like MNIST (seed 004's sparse data set)
``latent``          seed 003's spiked-covariance, Gaussian-mixture and single-topic data
``bundled``         data shipped in a dependency: scikit-learn's digits (extra ``datasets``)
``partition``       one contiguous block of rows per party
``holdout``         held-out rows and entries (thesis §3.3.1)
``checks``          finiteness and sign checks, argument checks
==================  ===========================================================================
"""

from algorithms.data.bundled import BUNDLED, bundled_dataset, load_digits
from algorithms.data.checks import (
    Matrix,
    check_finite,
    check_nonnegative,
    check_shards_observed,
)
from algorithms.data.dataset import Dataset, DatasetKind, load_dataset
from algorithms.data.holdout import EntryHoldout, RowHoldout, holdout_entries, holdout_rows
from algorithms.data.latent import SyntheticLatent, synthetic_mog, synthetic_spiked, synthetic_stm
from algorithms.data.matrix_files import MATRIX_SUFFIXES, load_matrix
from algorithms.data.mnist_like import MnistLike, synthetic_mnist
from algorithms.data.movielens import MovieLensRatings, read_movielens, write_movielens
from algorithms.data.movielens_like import MovieLensLike, synthetic_movielens
from algorithms.data.outliers import Contaminated, plant_outliers, unit_max_rows
from algorithms.data.partition import partition_rows, split_rows
from algorithms.data.profile_injection import convert_users, fake_profiles, flip_ratings
from algorithms.data.ratings_csv import load_ratings, read_ratings_csv
from algorithms.data.synthetic import (
    DEFAULT_ALPHA,
    DEFAULT_BETA,
    DEFAULT_DOC_LENGTH,
    DEFAULT_USER_CONCENTRATION,
    SYNTHETIC_KINDS,
    UNIFORM_SUM_LIMIT,
    SyntheticCorpus,
    SyntheticRatings,
    synthetic_dataset,
    synthetic_matrix,
    synthetic_ratings,
    synthetic_topic_corpus,
)
from algorithms.data.uci import BagOfWords, read_uci_bow, tf_rows, uci_vocab_path, write_uci_bow

__all__ = [
    "BUNDLED",
    "DEFAULT_ALPHA",
    "DEFAULT_BETA",
    "DEFAULT_DOC_LENGTH",
    "DEFAULT_USER_CONCENTRATION",
    "MATRIX_SUFFIXES",
    "SYNTHETIC_KINDS",
    "UNIFORM_SUM_LIMIT",
    "BagOfWords",
    "Contaminated",
    "Dataset",
    "DatasetKind",
    "EntryHoldout",
    "Matrix",
    "MnistLike",
    "MovieLensLike",
    "MovieLensRatings",
    "RowHoldout",
    "SyntheticCorpus",
    "SyntheticLatent",
    "SyntheticRatings",
    "bundled_dataset",
    "check_finite",
    "check_nonnegative",
    "check_shards_observed",
    "convert_users",
    "fake_profiles",
    "flip_ratings",
    "holdout_entries",
    "holdout_rows",
    "load_dataset",
    "load_digits",
    "load_matrix",
    "load_ratings",
    "partition_rows",
    "plant_outliers",
    "read_movielens",
    "read_ratings_csv",
    "read_uci_bow",
    "split_rows",
    "synthetic_dataset",
    "synthetic_matrix",
    "synthetic_mnist",
    "synthetic_mog",
    "synthetic_movielens",
    "synthetic_ratings",
    "synthetic_spiked",
    "synthetic_stm",
    "synthetic_topic_corpus",
    "tf_rows",
    "uci_vocab_path",
    "unit_max_rows",
    "write_movielens",
    "write_uci_bow",
]
