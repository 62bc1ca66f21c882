"""Drivers: what interprets the party programs' effects and writes the ledger and the views.

``simpy`` runs every party in one process over a simulated network (SimPy events, networkx
topology); ``mpi`` runs the same programs on MPI ranks (mpi4py over MPICH, the ``mpi``
extra); ``envelopes`` holds what both do to a message's bytes (encode, seal, open).
A protocol or an algorithm never imports a driver (``../DESIGN.md``, "Drivers
interpret effects"); :mod:`sim.simulation` picks one.
"""
