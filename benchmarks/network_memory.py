"""What a rank's network costs: memory and CPU of building a complete network of M parties and
asking a quarter of them for their route to every other party (issue 32, item 3).

Each MPI rank builds the scenario's :class:`~sim.network.Network` and asks it for the route
of every message its parties send. A complete network used to be a networkx graph of
M(M − 1)/2 edges, built whole by every rank; it is now implicit (:class:`sim.network.
CompleteNeighbours`). Prints one JSON line per M: ``network_mb`` (tracemalloc's live memory
after the build and the route look-ups) and ``cpu_s`` (process time of both).

Usage: ``python benchmarks/network_memory.py [--parties 64 128 256 1000]``; run it under
another checkout's ``PYTHONPATH`` for a before and after.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import tracemalloc

from sim.network import Network


def measure(m: int) -> dict[str, float]:
    """One M's build and route look-ups (a quarter of the senders, to every receiver)."""
    tracemalloc.start()
    try:
        start = time.process_time()
        network = Network.build(m)
        for a in range(0, m, max(1, m // 4)):
            for b in range(m):
                if a != b:
                    network.route_links(a, b)
        cpu = time.process_time() - start
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return {"parties": m, "network_mb": round(held / 1e6, 3), "cpu_s": round(cpu, 3)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parties", type=int, nargs="+", default=[64, 128, 256, 1000])
    args = parser.parse_args()
    for m in args.parties:
        print(json.dumps(measure(m)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
