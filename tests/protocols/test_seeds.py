"""The one seed scheme (issue 31): registered labels, HKDF derivation, no other seeding.

The derivation is checked against RFC 5869 computed here with the standard library's HMAC
(independent of :mod:`protocols.crypto.hkdf` and of ``cryptography``).
"""

from __future__ import annotations

import ast
import hashlib
import hmac
from pathlib import Path

import numpy as np
import pytest

from protocols import seeds
from protocols.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = ("protocols", "parties", "algorithms", "sim")


def rfc5869(ikm: bytes, salt: bytes, info: bytes, length: int) -> bytes:
    """HKDF-SHA256 from the RFC's two steps."""
    prk = hmac.digest(salt, ikm, hashlib.sha256)
    out, block, counter = b"", b"", 1
    while len(out) < length:
        block = hmac.digest(prk, block + info + bytes([counter]), hashlib.sha256)
        out += block
        counter += 1
    return out[:length]


def field(tag: bytes, raw: bytes) -> bytes:
    return tag + len(raw).to_bytes(4, "big") + raw


def test_a_stream_is_rfc5869_hkdf_of_the_root_with_its_label() -> None:
    root = 0x1234_5678_9ABC
    ikm = root.to_bytes(6, "big")
    run = field(b"s", b"run") + field(b"s", b"data")
    assert seeds.derive(root, "data") == rfc5869(ikm, seeds.SALT, run, 32)
    party = field(b"s", b"party") + field(b"i", (3).to_bytes(8, "big")) + field(b"s", b"masks")
    assert seeds.derive(root, "masks", party=3) == rfc5869(ikm, seeds.SALT, party, 32)
    call = (field(b"s", b"call") + field(b"s", b"dp_nmf_outliers.trial")
            + field(b"i", (2).to_bytes(8, "big")) + field(b"i", (5).to_bytes(8, "big")))
    assert (seeds.derive(root, "dp_nmf_outliers.trial", index=(2, 5), length=80)
            == rfc5869(ikm, seeds.SALT, call, 80))


def test_the_generator_and_the_integer_are_the_streams_bytes() -> None:
    material = seeds.derive(9, "data")
    value = int.from_bytes(material, "big")
    assert seeds.rng(9, "data").bit_generator.seed_seq.entropy == value
    expected = np.random.Generator(np.random.PCG64(np.random.SeedSequence(value))).random(4)
    assert np.array_equal(seeds.rng(9, "data").random(4), expected)
    assert seeds.derive_int(9, "cape.trial", index=(1,)) == int.from_bytes(
        seeds.derive(9, "cape.trial", index=(1,)), "big") >> (256 - 63)
    assert 0 <= seeds.derive_int(9, "audit", index=(0,), bits=32) < 2**32


def test_distinct_labels_parties_indices_and_roots_give_distinct_streams() -> None:
    streams = {seeds.derive(r, name) for r in (0, 1, 2**70)
               for name, label in seeds.LABELS.items() if label.owner == "run"}
    streams |= {seeds.derive(r, name, party=p) for r in (0, 1) for p in (0, 1, 12)
                for name, label in seeds.LABELS.items() if label.owner == "party"}
    streams |= {seeds.derive(r, name, index=i) for r in (0, 1) for i in ((1,), (1, 2), (12,))
                for name, label in seeds.LABELS.items() if label.owner == "call"}
    runs = sum(lb.owner == "run" for lb in seeds.LABELS.values())
    per_party = sum(lb.owner == "party" for lb in seeds.LABELS.values())
    calls = sum(lb.owner == "call" for lb in seeds.LABELS.values())
    assert len(streams) == 3 * runs + 6 * per_party + 6 * calls


def test_a_label_registered_twice_is_refused() -> None:
    first = seeds.Label("x", "run", "one stream", "a")
    with pytest.raises(InputError, match="'x' is registered twice"):
        seeds.registry([first, seeds.Label("x", "call", "another", "b")])
    with pytest.raises(InputError, match="owner 'everyone'"):
        seeds.registry([seeds.Label("y", "everyone", "?", "a")])  # type: ignore[arg-type]
    names = [lb.name for lb in seeds.LABELS.values()]
    assert len(names) == len(set(names)) and set(names) == set(seeds.LABELS)


def test_an_unregistered_label_or_a_wrong_owner_is_refused() -> None:
    with pytest.raises(InputError, match="'nope' is not registered"):
        seeds.derive(1, "nope")
    with pytest.raises(InputError, match="give the party id"):
        seeds.derive(1, "masks")
    with pytest.raises(InputError, match="takes no party id"):
        seeds.derive(1, "data", party=0)
    with pytest.raises(InputError, match="give the call index"):
        seeds.rng(1, "cape.trial")
    with pytest.raises(InputError, match="takes no index"):
        seeds.derive(1, "data", index=(1,))
    with pytest.raises(InputError, match="non-negative integer"):
        seeds.derive(-1, "data")
    with pytest.raises(InputError, match=r"in \[0, 2\^64\)"):
        seeds.derive(1, "rng", party=2**64)


def test_fresh_entropy_differs_and_fits_toml() -> None:
    drawn = {seeds.fresh_seed() for _ in range(8)}
    assert len(drawn) == 8 and all(0 <= s < 2**63 for s in drawn)
    assert len(seeds.fresh_bytes(16)) == 16 and seeds.fresh_bytes() != seeds.fresh_bytes()


def _library_files() -> list[Path]:
    return sorted(p for package in LIBRARY for p in (ROOT / package).rglob("*.py"))


SEEDING = {"SeedSequence", "spawn_key", "default_rng", "RandomState", "urandom", "token_bytes",
           "randbits", "getrandbits", "hmac", "PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64",
           "secrets", "Random"}
"""Names whose use seeds a generator, draws entropy or hand-writes a MAC-based KDF (``secrets``
and ``Random`` as imported modules or names: the standard library's ``random.Random`` and
``secrets``, galois's ``GF.Random``)."""

ALLOWED = {"protocols/seeds.py": SEEDING, "protocols/crypto/hkdf.py": {"hmac"}}
"""The registry itself, and the library's one HKDF (RFC 5869's extract is an HMAC)."""


def _used_names(tree: ast.AST) -> set[str]:
    """Attribute, keyword and imported names, and names read from a module's globals (a local
    variable called ``secrets`` is not the module; an imported one is caught at its import)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            out.add(node.attr)
        elif isinstance(node, ast.Name) and node.id not in ("secrets", "Random"):
            out.add(node.id)
        elif isinstance(node, ast.keyword) and node.arg:
            out.add(node.arg)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            out |= {alias.name.split(".")[-1] for alias in node.names}
            if isinstance(node, ast.ImportFrom) and node.module:
                out.add(node.module.split(".")[-1])
    return out


def test_the_library_seeds_nothing_but_through_the_registry() -> None:
    """Outside protocols/seeds.py no library module names SeedSequence, spawn_key,
    default_rng, a bit generator, the OS's entropy, ``secrets``, ``random.Random``, galois's
    ``Random`` or hmac (code, not docstrings: the AST is read); hmac only in the one HKDF."""
    offenders = {}
    for path in _library_files():
        allowed = ALLOWED.get(path.relative_to(ROOT).as_posix(), set())
        found = _used_names(ast.parse(path.read_text(encoding="utf-8"))) & SEEDING - allowed
        if found:
            offenders[str(path.relative_to(ROOT))] = sorted(found)
    assert offenders == {}


def test_the_scan_finds_a_planted_spawn_key() -> None:
    """The scan's power: each way of seeding it forbids is found in a planted module."""
    planted = {
        "np.random.default_rng(np.random.SeedSequence(7, spawn_key=(1_000_014,)))":
            {"default_rng", "SeedSequence", "spawn_key"},
        "import os\nkey = os.urandom(32)": {"urandom"},
        "import hmac\nprk = hmac.digest(b'', b'', 'sha256')": {"hmac"},
        "from numpy.random import RandomState": {"RandomState"},
        "import secrets\nk = secrets.token_bytes(8)": {"secrets", "token_bytes"},
        "import random\nr = random.Random(3)": {"Random"},
        "import galois\nGF = galois.GF(7)\nx = GF.Random(4, seed=3)": {"Random"},
        "g = np.random.Generator(np.random.PCG64(5))": {"PCG64"},
    }
    for source, names in planted.items():
        assert _used_names(ast.parse(source)) & SEEDING == names


def test_every_label_is_drawn_where_the_registry_says() -> None:
    """Each label's module names it (as a string): none is registered and never used, and the
    registry says where to look."""
    unused = []
    for name, label in seeds.LABELS.items():
        path = ROOT / Path(*label.module.split(".")).with_suffix(".py")
        if f'"{name}"' not in path.read_text(encoding="utf-8"):
            unused.append((name, label.module))
    assert unused == []


def test_the_documented_label_table_is_the_registry() -> None:
    """docs/running.md lists every registered label with its owner and module, and no other."""
    text = (ROOT / "docs" / "running.md").read_text(encoding="utf-8")
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0].startswith("`") and cells[3].startswith("`"):
            rows[cells[0].strip("`")] = (cells[1], cells[3].strip("`"))
    assert rows == {name: (lb.owner, lb.module) for name, lb in seeds.LABELS.items()}
