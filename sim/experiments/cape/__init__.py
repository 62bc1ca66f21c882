"""Entries of CAPE (seed 003): averaging, capePCA and capeAGN, and what they share."""
