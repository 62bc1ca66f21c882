"""The records of a view file, as JSON with their arrays set apart (issue 32).

:mod:`sim.view_store` writes a view as a JSON header and a data section of arrays; this module
is the codec both it and :mod:`sim.view_spill` use: :func:`encode` turns a record into JSON,
appending each numeric array to a list and referencing it by number (``{"a": [i, dtype,
shape]}``, the dtype as ``.npy`` headers describe it); :func:`decode` turns it back, asking a
function for each referenced array. Records are typed exactly (see :mod:`sim.view_store`'s
docstring for the tags); every array of the data section starts at a multiple of
:data:`ALIGN` bytes (:func:`padding`).
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import pickle
import sys
from collections.abc import Callable
from types import MappingProxyType
from typing import Any

import numpy as np

from protocols.effects import Call
from protocols.errors import InputError

ALIGN = 64
"""Every array of a view file starts at a multiple of this many bytes."""
def encode(value: Any, arrays: list[np.ndarray]) -> Any:
    """``value`` as JSON, its numeric arrays appended to ``arrays`` and referenced by index."""
    if value is None or isinstance(value, bool | str):
        return value
    if type(value) is int:
        return value
    if type(value) is float:
        return {"f": value.hex()}  # exact, and NaN and infinities too
    if isinstance(value, np.ndarray) and type(value) in (np.ndarray, np.memmap):
        if value.dtype.hasobject:
            return {"o": [list(value.shape), [encode(v, arrays) for v in value.ravel().tolist()]]}
        arrays.append(value)
        return {"a": [len(arrays) - 1, _dtype_json(value.dtype), list(value.shape)]}
    if isinstance(value, np.generic) and not value.dtype.hasobject:
        return {"g": [_dtype_json(value.dtype), value.tobytes().hex()]}
    if isinstance(value, bytes):
        return {"b": value.hex()}
    if type(value) is complex:
        return {"c": [value.real.hex(), value.imag.hex()]}
    if isinstance(value, Call):
        return {"call": [value.protocol, value.index]}
    if isinstance(value, range):
        return {"r": [value.start, value.stop, value.step]}
    if type(value) is tuple:
        return {"t": [encode(v, arrays) for v in value]}
    if type(value) is list:
        return {"l": [encode(v, arrays) for v in value]}
    if type(value) in (frozenset, set):
        items = [encode(v, arrays) for v in value]
        order = sorted(range(len(items)), key=lambda i: json.dumps(items[i], sort_keys=True))
        return {"fs" if type(value) is frozenset else "s": [items[i] for i in order]}
    if type(value) in (dict, MappingProxyType):
        pairs = [[encode(k, arrays), encode(v, arrays)] for k, v in value.items()]
        return {"d" if type(value) is dict else "mp": pairs}
    sparse = _sparse_parts(value)
    if sparse is not None:
        fmt, shape, parts = sparse
        return {"sp": [fmt, list(shape), [encode(p, arrays) for p in parts]]}
    if (dataclasses.is_dataclass(value) and not isinstance(value, type)
            and type(value).__dataclass_params__.frozen):  # type: ignore[attr-defined]
        cls = type(value)
        fields = [[f.name, encode(getattr(value, f.name), arrays)]
                  for f in dataclasses.fields(value) if f.init]
        return {"dc": [cls.__module__, cls.__qualname__, fields]}
    return {"p": pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL).hex()}


def _dtype_json(dtype: np.dtype) -> Any:
    """A dtype as JSON: ``'<u8'``, or a structured dtype's description (field names kept)."""
    return np.lib.format.dtype_to_descr(dtype)


def dtype_from(descr: Any) -> np.dtype:
    def tuples(x: Any) -> Any:
        return tuple(tuples(v) for v in x) if isinstance(x, list) else x

    if isinstance(descr, str):
        return np.dtype(descr)
    return np.lib.format.descr_to_dtype([tuples(field) for field in descr])


def _sparse_parts(value: Any) -> tuple[str, tuple[int, ...], list[np.ndarray]] | None:
    sparse = sys.modules.get("scipy.sparse")
    if sparse is None or not sparse.issparse(value) or value.format not in ("csr", "csc"):
        return None
    return value.format, value.shape, [value.data, value.indices, value.indptr]


def decode(value: Any, arrays: Callable[[int, Any, list[int]], np.ndarray]) -> Any:
    if not isinstance(value, dict):
        return value
    ((tag, body),) = value.items()
    if tag == "f":
        return float.fromhex(body)
    if tag == "a":
        return arrays(*body)
    if tag == "o":
        shape, items = body
        out = np.empty(len(items), dtype=object)
        for i, item in enumerate(items):
            out[i] = decode(item, arrays)
        out = out.reshape(shape)
        out.flags.writeable = False
        return out
    if tag == "g":
        return np.frombuffer(bytes.fromhex(body[1]), dtype=dtype_from(body[0]))[0]
    if tag == "b":
        return bytes.fromhex(body)
    if tag == "c":
        return complex(float.fromhex(body[0]), float.fromhex(body[1]))
    if tag == "call":
        return Call(body[0], body[1])
    if tag == "r":
        return range(*body)
    if tag in ("t", "l", "fs", "s"):
        items = [decode(v, arrays) for v in body]
        return {"t": tuple, "l": list, "fs": frozenset, "s": set}[tag](items)
    if tag in ("d", "mp"):
        pairs = {decode(k, arrays): decode(v, arrays) for k, v in body}
        return pairs if tag == "d" else MappingProxyType(pairs)
    if tag == "sp":
        import scipy.sparse as sp

        fmt, shape, parts = body
        data, indices, indptr = (decode(p, arrays) for p in parts)
        matrix = (sp.csr_matrix if fmt == "csr" else sp.csc_matrix)(
            (data, indices, indptr), shape=tuple(shape), copy=False)
        matrix.data, matrix.indices, matrix.indptr = data, indices, indptr  # no conversion
        return matrix
    if tag == "dc":
        module, qualname, fields = body
        cls: Any = importlib.import_module(module)
        for part in qualname.split("."):
            cls = getattr(cls, part)
        return cls(**{name: decode(v, arrays) for name, v in fields})
    if tag == "p":
        return pickle.loads(bytes.fromhex(body))
    raise InputError(f"a view file holds an unknown record tag {tag!r}")


def padding(n: int) -> int:
    return -n % ALIGN
