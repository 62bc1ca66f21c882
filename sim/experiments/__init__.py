"""Catalogue entries (:class:`sim.entry.Algorithm`), one module per algorithm or experiment."""

from sim.experiments.cape_mean import CAPE_MEAN
from sim.experiments.cape_otd import CAPE_OTD, CAPE_OTD_SWEEP
from sim.experiments.cape_pca import CAPE_PCA, CAPE_PCA_SWEEP
from sim.experiments.init_comparison import INIT_COMPARISON
from sim.experiments.pd_nmf import PD_NMF, RRI_NMF
from sim.experiments.secure_sum import SECURE_SUM
from sim.experiments.uplift import UPLIFT

ENTRIES = (SECURE_SUM, PD_NMF, RRI_NMF, INIT_COMPARISON, UPLIFT, CAPE_MEAN, CAPE_PCA,
           CAPE_PCA_SWEEP, CAPE_OTD, CAPE_OTD_SWEEP)
