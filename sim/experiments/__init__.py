"""Catalogue entries (:class:`sim.catalog.Algorithm`), one module per algorithm or experiment."""

from sim.experiments.secure_sum import SECURE_SUM

ENTRIES = (SECURE_SUM,)
