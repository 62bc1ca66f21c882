"""Drivers: what interprets the party programs' effects and writes the ledger and the views.

``interpreter`` interprets the effects once (dispatch, views, abort notices, unread messages)
over a transport: ``simpy`` runs every party in one process over a simulated network (SimPy
events, networkx topology; ``in_flight`` its message record); ``mpi`` runs the same programs
on MPI ranks (mpi4py over MPICH, the ``mpi`` extra; ``mpi_rank`` one rank's transport,
``mpi_comm`` its collectives, ``liveness`` dead-rank detection, ``launch`` mpiexec and rank
supervision). ``envelopes`` holds what every transport does to a message's bytes (encode,
seal, open); ``driver`` the interface :mod:`sim.simulation` uses and the registry of drivers
by name. A protocol or an algorithm never imports a driver (``../DESIGN.md``, "Drivers
interpret effects").
"""
