"""Catalogue entries (:class:`sim.entry.Algorithm`), one module per algorithm or experiment."""

from sim.experiments.cape.cape_mean import CAPE_MEAN
from sim.experiments.cape.cape_otd import CAPE_OTD, CAPE_OTD_SWEEP
from sim.experiments.cape.cape_pca import CAPE_PCA, CAPE_PCA_SWEEP
from sim.experiments.dsanls.dsanls import DSANLS
from sim.experiments.dsanls.secure_nmf import ASYN_SD, ASYN_SSD, SYN_SD, SYN_SSD
from sim.experiments.dsanls.secure_nmf_comparison import SECURE_NMF_COMPARISON
from sim.experiments.nmf.corrective_nmf import CORRECTIVE_NMF
from sim.experiments.nmf.corrective_nmf_tables import CORRECTIVE_NMF_COMPARISON
from sim.experiments.nmf.dp_nmf_outliers import DP_NMF_OUTLIERS, DP_NMF_OUTLIERS_EPSILON
from sim.experiments.nmf.init_comparison import INIT_COMPARISON
from sim.experiments.nmf.pd_nmf import PD_NMF, RRI_NMF
from sim.experiments.secagg import SECAGG
from sim.experiments.secure_sum import SECURE_SUM
from sim.experiments.studies.ksdp import KSDP
from sim.experiments.studies.uplift import UPLIFT
from sim.experiments.svd.normed_secure_sum import NORMED_SECURE_SUM
from sim.experiments.svd.pd_svd import PD_SVD

ENTRIES = (SECURE_SUM, PD_NMF, RRI_NMF, INIT_COMPARISON, UPLIFT, CAPE_MEAN, CAPE_PCA,
           CAPE_PCA_SWEEP, CAPE_OTD, CAPE_OTD_SWEEP, DP_NMF_OUTLIERS, DP_NMF_OUTLIERS_EPSILON,
           CORRECTIVE_NMF, CORRECTIVE_NMF_COMPARISON, NORMED_SECURE_SUM, PD_SVD, DSANLS, SYN_SD,
           SYN_SSD, ASYN_SD, ASYN_SSD, SECURE_NMF_COMPARISON, KSDP, SECAGG)
