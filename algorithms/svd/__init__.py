"""Truncated SVD: centralized block power iteration and PD-SVD (thesis seed 001, §2.3).

``power_iteration``  Algorithm 9 (centralized reference), modified Gram–Schmidt, metrics.
``pd_svd``           Algorithm 10, party m's program, over SecureSum and NormedSecureSum.
"""
