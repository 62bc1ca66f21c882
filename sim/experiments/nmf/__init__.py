"""Entries of the NMF papers: PD-NMF and RRI-NMF with their initialisation comparison (thesis
seed 001), DP robust NMF with outliers (seed 000), corrective NMF and its tables (seed 002)."""
