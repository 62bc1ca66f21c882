"""The claims table run in several processes (``mpcsim claims --jobs N``), its rows in the
catalogue's order and the same as one process's.

Claims that read the same scenario runs (:class:`sim.claims.table.Runs`) form one *group*,
measured in one process with one cache, so that no run is done twice; groups go to the
processes longest first (by their last measured CPU seconds), which keeps the processes busy
until the end. A claim that times its own calls (``alone``) is measured in this process before
the others start, so that no other claim competes with it for the CPU.

Every row is computed by the same code from the same seeds in either case: a row's figures do
not depend on the process that measured it, only its ``seconds`` and ``cpu_seconds`` do.
Results are handed on in the catalogue's order — a row waits for those before it — so the
text, JSON lines and markdown outputs are in the order of a run in one process.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any

from sim.claims.table import Claim


def plan(ids: Sequence[str], groups: Sequence[Sequence[str]], alone: Sequence[str],
         cost: Mapping[str, float]) -> tuple[list[str], list[list[str]]]:
    """The claims to measure first in this process, and the groups for the other processes.

    ``ids`` are the claims to run, in the catalogue's order; ``groups`` name claims that share
    scenario runs (a claim in none is a group of its own); ``cost`` is the last measured CPU
    seconds of a claim (0 if unknown). Each group keeps the catalogue's order within it;
    groups are sorted by their summed cost, largest first (ties in the catalogue's order)."""
    wanted = set(ids)
    first = [i for i in ids if i in set(alone)]
    grouped: dict[str, list[str]] = {}
    for group in groups:
        members = [i for i in ids if i in set(group) and i not in first]
        for i in members:
            grouped[i] = members
    out: list[list[str]] = []
    seen: set[str] = set(first)
    for i in ids:
        if i in seen or i not in wanted:
            continue
        members = grouped.get(i, [i])
        seen.update(members)
        out.append(members)
    order = {i: n for n, i in enumerate(ids)}
    out.sort(key=lambda g: (-sum(cost.get(i, 0.0) for i in g), order[g[0]]))
    return first, out


def in_processes(claims: Sequence[Claim], ids: Sequence[str], jobs: int, quick: bool,
                 groups: Sequence[Sequence[str]], alone: Sequence[str],
                 cost: Mapping[str, float],
                 here: Callable[[list[str]], Iterator[dict[str, Any]]],
                 measure: Callable[[list[str], bool], list[dict[str, Any]]],
                 finished: Callable[[dict[str, Any]], None] | None = None,
                 ) -> Iterator[dict[str, Any]]:
    """Yield the rows of ``ids`` (all claims if empty) in the catalogue's order, measured in
    ``jobs`` processes; ``here`` measures a list of claims in this process (the ``alone``
    ones), ``measure`` a group in another (a module-level function, which the processes import
    by name). ``finished`` is called with every row as soon as its process hands it back, in
    whatever order they finish."""
    order = [c.id for c in claims if not ids or c.id in ids]
    first, planned = plan(order, groups, alone, cost)
    done: dict[str, dict[str, Any]] = {}
    for row in here(first):
        done[row["id"]] = row
        if finished is not None:
            finished(row)
    nxt = 0

    def ready() -> Iterator[dict[str, Any]]:
        nonlocal nxt
        while nxt < len(order) and order[nxt] in done:
            yield done.pop(order[nxt])
            nxt += 1

    yield from ready()
    if not planned:
        return
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=min(jobs, len(planned)), mp_context=context) as pool:
        pending: set[Future[list[dict[str, Any]]]] = {
            pool.submit(measure, group, quick) for group in planned}
        while pending:
            complete, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in complete:
                if future.exception() is not None:  # fail now: drop the groups not started
                    pool.shutdown(wait=False, cancel_futures=True)
                for row in future.result():
                    done[row["id"]] = row
                    if finished is not None:
                        finished(row)
            yield from ready()
