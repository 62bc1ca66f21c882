"""DSANLS and its secure variants (Qian et al., seed 004): one paper's family of modules.

The paper writes M ≈ UVᵀ with M = Xᵀ (U ↔ Tᵀ, V ↔ W); each module converts at its boundary.

==============  =============================================================================
``sketches``    random sketches with E[SSᵀ] = I, drawn from a shared seed (seed 004, §3.4)
``sanls``       SANLS: one-step RCD (Algorithm 3) and PGD (Eq. 14) solvers; the reference
``dsanls``      DSANLS, general and federated settings (Algorithm 2, §4.1)
``secure_nmf``  what the secure variants share: configuration, local updates
``syn_sd``      Syn-SD (Algorithm 4)
``syn_ssd``     Syn-SSD and its -U, -V, -UV variants (Algorithm 5)
``asyn_sd``     Asyn-SD and Asyn-SSD: server and client (Algorithms 6, 7)
==============  =============================================================================
"""
