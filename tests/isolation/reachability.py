"""What a party program can reach from the objects the simulator hands it.

:func:`reachable` walks the object graph from some roots the way a curious program could with
ordinary Python — attributes, container items, closures, bound methods, exception chains —
and returns every object it meets. It deliberately does *not* follow the routes that
introspect the interpreter itself, which Python cannot close inside one process and the trust
boundary names as outside the model (README, "Trust boundary"):

* the garbage collector (``gc.get_referrers``, ``gc.get_objects``, ``gc.get_referents``);
* a frame's caller (``f_back``, ``sys._getframe``) and a generator's own frame
  (``gi_frame``) — a traceback's frames *are* followed (their locals), since an exception is
  something the simulator hands a program, but never their callers;
* modules, classes and code objects (shared code; module globals have a test of their own).

Numpy generators and arrays are walked through their public attributes (``bit_generator``,
``seed_seq``, ``state``, ``base``).
"""

from __future__ import annotations

import functools
import types
import weakref
from collections import deque
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

_LEAVES = (type(None), bool, int, float, complex, str, bytes, bytearray, range, np.generic,
           np.dtype)
_OPAQUE = (types.ModuleType, type, types.CodeType, types.FrameType, types.GeneratorType)


def reachable(roots: Iterable[Any], limit: int = 200_000) -> dict[int, Any]:
    """Every object reachable from ``roots`` (by id), leaves included."""
    seen: dict[int, Any] = {}
    queue = deque(roots)
    while queue:
        obj = queue.popleft()
        if id(obj) in seen:
            continue
        if type(obj) in weakref.ProxyTypes and not _alive(obj):
            continue  # a dead weak proxy (numba's compiled-code objects hold some) is nothing
        seen[id(obj)] = obj
        if len(seen) > limit:
            raise RuntimeError(f"more than {limit} objects reachable; the walk is not bounded")
        if isinstance(obj, _LEAVES):
            continue
        queue.extend(_children(obj))
    return seen


def _children(obj: Any) -> Iterator[Any]:
    if isinstance(obj, types.TracebackType):
        tb: types.TracebackType | None = obj
        while tb is not None:  # the frames a traceback holds, never their callers
            yield from tb.tb_frame.f_locals.values()
            tb = tb.tb_next
        return
    if isinstance(obj, _OPAQUE):
        return
    if isinstance(obj, BaseException):
        yield from (obj.args, obj.__cause__, obj.__context__, obj.__traceback__)
    if isinstance(obj, dict | types.MappingProxyType):
        for key, value in obj.items():
            yield key
            yield value
    elif isinstance(obj, tuple | list | set | frozenset | deque):
        yield from obj
    if isinstance(obj, np.ndarray):
        yield obj.base
        if obj.dtype.hasobject:
            yield from obj.ravel().tolist()
        return
    if isinstance(obj, np.random.Generator):
        yield obj.bit_generator
    if isinstance(obj, np.random.BitGenerator):
        yield obj.seed_seq
        yield obj.state
    if isinstance(obj, np.random.SeedSequence):
        yield from (obj.entropy, obj.spawn_key, obj.pool, obj.n_children_spawned)
    if isinstance(obj, types.FunctionType):
        yield from (cell.cell_contents for cell in obj.__closure__ or () if _filled(cell))
        yield from (obj.__defaults__, obj.__kwdefaults__, getattr(obj, "__wrapped__", None))
        return
    if isinstance(obj, types.MethodType):
        yield from (obj.__self__, obj.__func__)
        return
    if isinstance(obj, types.BuiltinMethodType | types.MethodWrapperType):  # [].append
        yield obj.__self__
        return
    if isinstance(obj, functools.partial):
        yield from (obj.func, obj.args, obj.keywords)
    yield from _instance_state(obj)


def _instance_state(obj: Any) -> Iterator[Any]:
    state = getattr(obj, "__dict__", None)
    if isinstance(state, dict):
        yield state
    for cls in type(obj).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name not in ("__dict__", "__weakref__") and hasattr(obj, name):
                yield getattr(obj, name)


def _alive(proxy: Any) -> bool:
    """Whether a weak proxy's referent still exists (a dead one raises on any access)."""
    try:
        proxy.__class__  # noqa: B018 - a dead proxy raises
    except ReferenceError:
        return False
    return True


def _filled(cell: types.CellType) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True
