"""Seed 003 (Imtiaz & Sarwate 2018): differentially private PCA and orthogonal tensor
decomposition with correlated noise — capePCA (:mod:`.pca`, Algorithm 1) and capeAGN
(:mod:`.otd`, Algorithm 2), with the moments of the single topic model and the spherical
mixture of Gaussians (:mod:`.moments`), the tensor power method (:mod:`.tensor_power`) and the
symmetric noise objects (:mod:`.symmetric`). The CAPE protocol itself is
:mod:`protocols.correlated_noise`.
"""
