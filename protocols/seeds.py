"""The one seed scheme: every random stream of the library, derived by HKDF from a root seed.

A *root* is the run seed (the scenario's ``seed``, or a seed an entry derived from it for a
trial or an audit) or a seed the parties hold in common (DSANLS's broadcast sketch seed). A
stream is named by a *label* registered once in :data:`LABELS` — its name, what it is for, who
owns it and the module that draws it — and derived as

    HKDF-SHA256(ikm = root, salt = :data:`SALT`, info = owner ‖ [party] ‖ name ‖ index…)

(RFC 5869, through :mod:`protocols.crypto.hkdf`, the library's one HKDF; the fields of
``info`` typed and length prefixed, :func:`info`). The owner says what else names one stream
of the label:

* ``run``: the root alone — one stream per run (the synthetic data, the pre-shared setup);
* ``party``: the root and a party id — that party's own seeds (its local coins ``rng``, its
  X25519 key seed, its private mask key); a party is handed its own 32 bytes, never the root,
  and HKDF is one way: its bytes tell nothing of the root or of another party's;
* ``call``: the root and an index (a trial, an iteration, a repetition, an audit's key path).

A numpy generator of a stream is seeded with the stream's 32 bytes as one big-endian integer
(:func:`generator`), so ``rng.bit_generator.seed_seq.entropy`` is the stream's own value.
Fresh entropy is drawn in one place, :func:`fresh_seed` (a run given no seed; the drawn seed
is recorded in the result and the report, so the run replays), and :func:`fresh_bytes` (key
material from the operating system for ``key_source = "os"``, and unique file names).

A label not in :data:`LABELS`, a party id on a label that is not per party, or a missing
index on a per-call label raise :class:`~protocols.errors.InputError`: a stream cannot be
drawn under a name no one registered (``tests/protocols/test_seeds.py`` also scans the
library for other ways to seed a generator).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

import numpy as np

from protocols.crypto.hkdf import hkdf_expand, hkdf_extract
from protocols.errors import InputError

Owner = Literal["run", "party", "call"]
OWNERS: tuple[str, ...] = ("run", "party", "call")

SALT = b"mpcsim/sim/party-seeds/v1"
"""HKDF salt of every derivation (a fixed project label; ``v1`` of the scheme)."""

SEED_BYTES = 32
_ID_LIMIT = 1 << 64


@dataclass(frozen=True)
class Label:
    """One registered random stream: its name, what it is for, who owns it, who draws it."""

    name: str
    owner: Owner
    purpose: str
    module: str


def registry(labels: Iterable[Label]) -> Mapping[str, Label]:
    """The read-only table of ``labels`` by name; a name given twice or an unknown owner raises.

    Raises
    ------
    InputError
        If two labels share a name, or a label's owner is not one of :data:`OWNERS`.
    """
    table: dict[str, Label] = {}
    for label in labels:
        if label.owner not in OWNERS:
            raise InputError(f"label {label.name!r}: owner {label.owner!r} is not one of "
                             f"{OWNERS}")
        if label.name in table:
            first = table[label.name].module
            raise InputError(f"label {label.name!r} is registered twice ({first} and "
                             f"{label.module})")
        table[label.name] = label
    return MappingProxyType(table)


LABELS: Mapping[str, Label] = registry((
    # -- a run's parties (sim.simulation): each party's own seeds -----------------------------
    Label("rng", "party", "the party's local coins (ctx.rng)", "sim.simulation"),
    Label("x25519", "party", "the party's X25519 key seed (key agreement)", "sim.simulation"),
    Label("masks", "party", "the party's private mask key (AES-CTR streams; a call's coins "
          "and CAPE's noise are drawn from its private stream)", "sim.simulation"),
    Label("preshared", "run", "the trusted setup's master key of the pre-shared pair keys",
          "sim.simulation"),
    # -- scenarios (sim) ---------------------------------------------------------------------
    Label("data", "run", "the synthetic data set of a scenario", "sim.runner"),
    Label("audit", "call", "the seed of the index-th [[audit]] of a run", "sim.privacy"),
    Label("audit.exact_inputs", "run", "the random field inputs of an exact [[audit]]",
          "sim.privacy"),
    Label("pd_svd_cost.inputs", "run", "the inputs of a PD-SVD cost measurement",
          "sim.pd_svd_cost"),
    Label("pd_nmf.init", "run", "PD-NMF's random start", "sim.experiments.nmf.pd_nmf"),
    Label("pd_nmf_init_comparison.trial", "call", "the seed of a trial of the init comparison",
          "sim.experiments.nmf.init_comparison"),
    Label("uplift.init", "run", "the start of the uplift study", "sim.experiments.studies.uplift"),
    Label("topic_quality.holdout", "run", "the held-out documents of the topic-quality study",
          "sim.experiments.studies.topic_quality"),
    Label("topic_quality.trial", "call", "the seed of a trial of the topic-quality study",
          "sim.experiments.studies.topic_quality"),
    Label("dpnmf_comparison.data", "call", "the synthetic data of a trial of the DP-NMF / "
          "DPNMF comparison (kind, trial)", "sim.experiments.nmf.dpnmf_comparison"),
    Label("dpnmf_comparison.noise", "call", "the DP noise of a trial of that comparison "
          "(kind, trial)", "sim.experiments.nmf.dpnmf_comparison"),
    Label("dp_nmf_datasets.data", "call", "the synthetic data of one of seed 000's six data "
          "sets (set)", "sim.experiments.nmf.dp_nmf_datasets"),
    Label("dp_nmf_datasets.noise", "call", "the DP noise of one private run on a set "
          "(set, ε index, trial)", "sim.experiments.nmf.dp_nmf_datasets"),
    Label("topic_models.corpus", "call", "a shaped synthetic corpus of the NMF / LDA / "
          "K-means comparison (shape, repetition)", "sim.experiments.studies.topic_models"),
    Label("topic_models.fit", "call", "the LDA and K-means seeds of that comparison (shape, "
          "repetition)", "sim.experiments.studies.topic_models"),
    Label("topic_tuning.search", "call", "the root of one Hyperband search of the tuned "
          "comparison (shape, repetition, model)", "sim.experiments.studies.topic_tuning"),
    Label("hyperband.config", "call", "configuration j of Hyperband's bracket s (root: the "
          "search's seed; index (s, j))", "algorithms.hyperband"),
    Label("pd_svd.holdout", "run", "the held-out rows of a PD-SVD run",
          "sim.experiments.svd.pd_svd"),
    Label("dsanls.init", "call", "DSANLS's U^0 (index ('U',)) and node r's V^0 "
          "(index ('V', r))",
          "sim.experiments.dsanls.dsanls"),
    Label("ksdp", "run", "the KSDP study's data and draws", "sim.experiments.studies.ksdp"),
    Label("cape.trial", "call", "the simulation seed of a CAPE trial (trial > 0)",
          "sim.experiments.cape.cape_setup"),
    Label("cape_pca.trial", "run", "a CAPE-PCA trial's central draws (root: the trial seed)",
          "sim.experiments.cape.cape_pca"),
    Label("cape_otd.trial", "run", "a CAPE-OTD trial's central draws (root: the trial seed)",
          "sim.experiments.cape.cape_otd"),
    Label("dp_nmf_outliers.plant", "run", "the planted outliers", "sim.experiments.nmf"
          ".dp_nmf_outliers"),
    Label("dp_nmf_outliers.init", "run", "the start of the DP-NMF runs",
          "sim.experiments.nmf.dp_nmf_outliers"),
    Label("dp_nmf_outliers.trial", "call", "the seed of trial t of setting j",
          "sim.experiments.nmf.dp_nmf_outliers"),
    Label("corrective_nmf.holdout", "run", "the held-out entries",
          "sim.experiments.nmf.corrective_nmf"),
    Label("corrective_nmf.init", "run", "the start of the corrective NMF runs",
          "sim.experiments.nmf.corrective_nmf"),
    Label("corrective_nmf.attack", "run", "the attack's draws",
          "sim.experiments.nmf.corrective_nmf"),
    Label("corrective_nmf.repetition", "call", "repetition r of the corrective NMF tables",
          "sim.experiments.nmf.corrective_nmf_tables"),
    Label("cape_mean.conventional", "run", "the simulation seed of the conventional-scheme "
          "run a CAPE mean is compared with", "sim.experiments.cape.cape_mean"),
    Label("normed_secure_sum.scaled", "call", "the simulation seed of the run on inputs B "
          "(λS) for the j-th coalition", "sim.experiments.svd.normed_secure_sum"),
    # -- the claims table (sim.claims): fixed roots, one stream per claim ------------------------
    Label("claims.c6.inputs", "run", "C6's party inputs (root 5)", "sim.claims.seed001"),
    Label("claims.c17.data", "run", "C17's ratings matrix (root: the repetition)",
          "sim.claims.seed002"),
    Label("claims.c17.start", "run", "C17's random start (root: the repetition)",
          "sim.claims.seed002"),
    Label("claims.c19.sketches", "run", "C19's Monte Carlo sketches (root 19)",
          "sim.claims.seed004"),
    # -- audits (parties.audit): root is the audit's seed ------------------------------------
    Label("audit.randomness", "call", "injected key material by path (0: fixed; 1, t: fresh "
          "in trial t)", "parties.audit.randomness"),
    Label("audit.simulation", "run", "the simulation method's simulator draws",
          "parties.audit.simulation"),
    Label("audit.pattern", "run", "the redrawn honest inputs of the pattern check",
          "parties.audit.simulation"),
    Label("audit.statistical", "run", "the statistical method's draws",
          "parties.audit.statistical"),
    Label("audit.statistical.pair", "call", "the comparison seed of the k-th alternative input "
          "set", "parties.audit.statistical"),
    Label("audit.exact.keys", "run", "the exact method's key material",
          "parties.audit.exact"),
    Label("audit.exact.alternatives", "run", "the exact method's alternative keys",
          "parties.audit.exact"),
    Label("audit.linear", "run", "the linear method's random probes", "parties.audit.linear"),
    Label("audit.keyflow", "run", "honest inputs redrawn for the offset search",
          "parties.audit.keyflow"),
    Label("audit.functionality", "run", "the resplit inputs of the output check",
          "parties.audit.functionality"),
    Label("audit.unmasking", "run", "the unmasking search's draws",
          "parties.audit.unmasking"),
    Label("audit.compare", "run", "the comparison's random projections",
          "parties.audit.compare"),
    # -- fixed roots: functions of their input alone ---------------------------------------
    Label("nndsvd.start", "run", "ARPACK's start vector (root: a fixed constant)",
          "algorithms.nmf.nndsvd"),
    Label("secagg.sizes", "run", "a throwaway draw that only gives message sizes "
          "(root 0)", "protocols.secagg_simulator"),
    # -- seeds the parties share ------------------------------------------------------------
    Label("dsanls.sketch", "call", "sketch (purpose, t[, node]) (root: the broadcast seed)",
          "algorithms.nmf.dsanls.sketches"),
))
"""Every random stream of the library (see the table in docs/running.md)."""


def info(*fields: int | str) -> bytes:
    """Typed, length-prefixed encoding of names and ids (HKDF info): never ambiguous."""
    parts = []
    for value in fields:
        if isinstance(value, str):
            raw = value.encode()
            parts.append(b"s" + len(raw).to_bytes(4, "big") + raw)
        else:
            parts.append(b"i\x00\x00\x00\x08" + int(value).to_bytes(8, "big"))
    return b"".join(parts)


def root_bytes(root: int) -> bytes:
    """The root as HKDF input keying material: minimal big-endian bytes (injective on ≥ 0)."""
    if isinstance(root, bool) or not isinstance(root, int | np.integer) or root < 0:
        raise InputError(f"seed = {root!r} must be a non-negative integer")
    root = int(root)
    return root.to_bytes(max(1, (root.bit_length() + 7) // 8), "big")


def _check_id(value: int | str, what: str) -> int | str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or not (
            0 <= value < _ID_LIMIT):
        raise InputError(f"{what} = {value!r} must be an integer in [0, 2^64)")
    return int(value)


def label_info(name: str, party: int | None = None, index: Sequence[int | str] = ()) -> bytes:
    """The HKDF info of stream ``name`` (of ``party``, at ``index``), checked against its label.

    Raises
    ------
    InputError
        If ``name`` is not registered, a party is given to a label that is not per party (or
        missing from one that is), or a per-call label has no index (or another label one).
    """
    label = LABELS.get(name)
    if label is None:
        raise InputError(f"random stream {name!r} is not registered in protocols.seeds.LABELS")
    if (party is not None) != (label.owner == "party"):
        raise InputError(f"random stream {name!r} is owned per {label.owner}: "
                         + ("give the party id" if label.owner == "party" else
                            "it takes no party id"))
    if bool(index) != (label.owner == "call"):
        raise InputError(f"random stream {name!r} is owned per {label.owner}: "
                         + ("give the call index" if label.owner == "call" else
                            "it takes no index"))
    if label.owner == "party":
        return info("party", _check_id(party, "party"), name)  # type: ignore[arg-type]
    fields = [_check_id(v, "index") for v in index]
    return info(label.owner, name, *fields)


def derive(root: int, name: str, *, party: int | None = None,
           index: Sequence[int | str] = (), length: int = SEED_BYTES) -> bytes:
    """``length`` bytes of stream ``name`` derived one way from ``root`` (HKDF-SHA256).

    Parameters
    ----------
    root : int
        The run seed (or a seed derived from it, or one the parties share); non-negative.
    name : str
        A label of :data:`LABELS`.
    party : int, optional
        The party, for a label owned per party.
    index : sequence of int or str, optional
        The call, trial or path, for a label owned per call.
    """
    return expand(root_key(root), name, party=party, index=index, length=length)


def root_key(root: int) -> bytes:
    """HKDF-Extract of ``root`` under :data:`SALT`: the pseudo-random key every stream of the
    root is expanded from (a caller deriving many streams of one root extracts once)."""
    return hkdf_extract(SALT, root_bytes(root))


def expand(prk: bytes, name: str, *, party: int | None = None,
           index: Sequence[int | str] = (), length: int = SEED_BYTES) -> bytes:
    """HKDF-Expand of stream ``name`` from a root's :func:`root_key` (RFC 5869 §2.3);
    ``expand(root_key(r), name, ...) == derive(r, name, ...)``."""
    return hkdf_expand(prk, label_info(name, party, index), length)


def generator(material: bytes | int | Sequence[int]) -> np.random.Generator:
    """A numpy generator seeded with ``material``: bytes as one big-endian integer, an int, or
    a sequence of ints (words of a private stream). Its ``seed_seq.entropy`` is that value."""
    entropy = int.from_bytes(material, "big") if isinstance(material, bytes) else material
    return np.random.default_rng(np.random.SeedSequence(entropy))


def rng(root: int, name: str, *, party: int | None = None,
        index: Sequence[int | str] = ()) -> np.random.Generator:
    """The numpy generator of stream ``name`` (:func:`derive`, then :func:`generator`)."""
    return generator(derive(root, name, party=party, index=index))


def derive_int(root: int, name: str, *, party: int | None = None,
               index: Sequence[int | str] = (), bits: int = 63) -> int:
    """A ``bits``-bit integer of stream ``name`` (a seed for a trial, an audit, a run): 63 bits
    by default, so that it fits a TOML integer."""
    return int.from_bytes(derive(root, name, party=party, index=index), "big") >> (
        8 * SEED_BYTES - bits)


def fresh_seed() -> int:
    """A run seed drawn from the operating system (63 bits: fits TOML). The one place a run's
    seed comes from entropy; the caller records it so that the run replays."""
    return secrets.randbits(63)


def fresh_bytes(n: int = SEED_BYTES) -> bytes:
    """``n`` bytes from the operating system: key material under ``key_source = "os"``."""
    return secrets.token_bytes(n)
