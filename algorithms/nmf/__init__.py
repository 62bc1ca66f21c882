"""Non-negative matrix factorisation: the centralized references and the private programs.

Rows are samples, ``X ≈ W @ T`` with ``X`` n×d, ``W`` n×k, ``T`` k×d (thesis seed 001);
``dp_robust`` keeps seed 000's orientation (samples in columns) and says so. Seed 004's modules
use the paper's M ≈ UVᵀ with M = Xᵀ (U ↔ Tᵀ, V ↔ W) and convert at their boundary.

==============  =============================================================================
``rri``         RRI-NMF, the centralized reference (thesis Algorithm 2, Eq. 2.31): the driver
``rri_steps``   its per-topic steps, shared with PD-NMF-Iter (the Theorem 2 contract)
``simplex``     simplex projection, Lemma 1, Corollary 1
``objective``   E(W, T) of Eqs. 2.28–2.29
``row_blocks``  one party's rows under the full or the observed-entries loss
``nndsvd``      NNDSVD initialisation (Boutsidis & Gallopoulos), and its PD-SVD-fed form
``wr``          WR-NMF, weighted representatives (thesis Algorithm 6)
``pd_nmf``      PD-NMF-Iter and PD-NMF-Init as party programs (thesis Algorithms 7, 8)
``dsanls/``    seed 004 (Qian et al.): SANLS, DSANLS and the secure variants, its own family
``dp_robust``   DP robust NMF with outliers: curators and analyst (seed 000, Algorithm 2)
``corrective``  corrective NMF under adversarial users, masked updates (seed 002, Alg. 1)
==============  =============================================================================
"""
