"""Catalogue entries (:class:`sim.entry.Algorithm`), one module per algorithm or experiment."""

from sim.experiments.cape_mean import CAPE_MEAN
from sim.experiments.cape_otd import CAPE_OTD, CAPE_OTD_SWEEP
from sim.experiments.cape_pca import CAPE_PCA, CAPE_PCA_SWEEP
from sim.experiments.corrective_nmf import CORRECTIVE_NMF
from sim.experiments.corrective_nmf_tables import CORRECTIVE_NMF_COMPARISON
from sim.experiments.dp_nmf_outliers import DP_NMF_OUTLIERS, DP_NMF_OUTLIERS_EPSILON
from sim.experiments.dsanls import DSANLS
from sim.experiments.init_comparison import INIT_COMPARISON
from sim.experiments.ksdp import KSDP
from sim.experiments.nmf_baselines import NMF_BASELINES
from sim.experiments.normed_secure_sum import NORMED_SECURE_SUM
from sim.experiments.pd_nmf import PD_NMF, RRI_NMF
from sim.experiments.pd_svd import PD_SVD
from sim.experiments.secagg import SECAGG
from sim.experiments.secure_nmf import ASYN_SD, ASYN_SSD, SYN_SD, SYN_SSD
from sim.experiments.secure_nmf_comparison import SECURE_NMF_COMPARISON
from sim.experiments.secure_sum import SECURE_SUM
from sim.experiments.uplift import UPLIFT

ENTRIES = (SECURE_SUM, PD_NMF, RRI_NMF, INIT_COMPARISON, UPLIFT, CAPE_MEAN, CAPE_PCA,
           CAPE_PCA_SWEEP, CAPE_OTD, CAPE_OTD_SWEEP, DP_NMF_OUTLIERS, DP_NMF_OUTLIERS_EPSILON,
           CORRECTIVE_NMF, CORRECTIVE_NMF_COMPARISON, NORMED_SECURE_SUM, PD_SVD, DSANLS, SYN_SD,
           SYN_SSD, ASYN_SD, ASYN_SSD, SECURE_NMF_COMPARISON, KSDP, SECAGG, NMF_BASELINES)
