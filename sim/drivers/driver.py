"""What :class:`sim.simulation.Simulation` asks of a driver, and how it finds one by name.

A driver places the run's participants on its processes (:meth:`Driver.place`, then
:meth:`Driver.hosts`), runs the hosted parties' programs (:meth:`Driver.interpret`: the
effects are interpreted by :mod:`sim.drivers.interpreter` over the driver's transport) and
hands back every party's outputs, ledger rows and views. The simulation never asks which
driver it holds: what differs is behind these methods (``simpy``: one process, everything
hosted; ``mpi``: the parties spread over the job's ranks, results gathered).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from protocols.context import PartyContext
from protocols.errors import InputError

if TYPE_CHECKING:
    from parties.view import View
    from protocols.field import PrimeField
    from sim.faults import FaultLog, FaultPlan
    from sim.ledger import Row
    from sim.network import Network

Interceptor = Callable[[int, int, str, bytes], bytes]
"""``interceptor(sender, receiver, tag, data) -> data``: rewrites bytes in transit."""
ProgramFactory = Callable[[PartyContext], Generator[Any, Any, Any]]


@dataclass
class DriverOutcome:
    """A run's outputs and ledger rows; ``simulated_s`` the run's time on the driver's clock
    (simulated under SimPy, the longest rank's wall time under MPI); ``wall_s`` the wall
    time the driver measured itself, if any; ``faults`` what was injected."""

    outputs: dict[int, Any]
    rows: list[Row]
    simulated_s: float
    faults: FaultLog | None = None
    wall_s: float | None = None


class Driver(Protocol):
    """The interface every driver offers the simulation."""

    def place(self, participants: Sequence[int]) -> None:
        """Assign the run's participants to this driver's processes."""

    def hosts(self, pid: int) -> bool:
        """Whether party ``pid`` runs in this process (its state is made here only)."""

    def shared(self, value: Any) -> Any:
        """One process's ``value`` at every process (a trusted setup's common secret)."""

    def interpret(
        self,
        contexts: Mapping[int, PartyContext],
        programs: Mapping[int, ProgramFactory],
        views: dict[int, View],
        settle: Callable[[], None],
    ) -> tuple[DriverOutcome, dict[int, View]]:
        """Run the hosted programs; ``settle()`` completes the hosted views (seeds, draws)
        before they are combined; return the run's outcome and every party's view."""


class DriverClass(Protocol):
    def __call__(self, network: Network, *, sealing: bool, interceptor: Interceptor | None,
                 record_messages: bool, field: PrimeField | None,
                 faults: FaultPlan | None) -> Driver: ...

    def check(self, faults: FaultPlan) -> None: ...

    def describe(self) -> dict[str, Any]: ...


DRIVERS = {"simpy": "sim.drivers.simpy:SimPyDriver", "mpi": "sim.drivers.mpi:MpiDriver"}
"""Driver name → ``module:class``, imported when asked for (MPI only when used)."""


def driver_class(name: str) -> DriverClass:
    """The driver called ``name``; an unknown name is an :class:`InputError`."""
    if name not in DRIVERS:
        raise InputError(f"driver = {name!r} is unknown; use one of {tuple(DRIVERS)}")
    module, cls = DRIVERS[name].split(":")
    found: DriverClass = getattr(importlib.import_module(module), cls)
    return found
