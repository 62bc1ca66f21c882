"""The arithmetic-sharing MPC engine behind NormedSecureSum (semi-honest, trusted dealer).

Spec ``normed_secure_sum.md`` §2. Data holders hold additive shares over GF(p) (p = 2^127 − 1
by default, :mod:`protocols.field.mersenne127`); a trusted dealer supplies input-independent
preprocessing material in an offline phase; every opening is masked and range-checked. One
module per primitive family:

============ =================================================== ========================
module       primitives                                           declared cost (rounds)
============ =================================================== ========================
dealer       triples, square pairs, bits, κ-masks, trunc pairs    offline, 1 message each
session      input sharing (P0), openings, local linear ops       1 per opening
multiply     Beaver products (P1), squares (P2)                   1
truncate     TruncPr (P3), dithered output opening (O4)           1
bits         BitDec (P4), prefix-OR (P5), Sklansky networks        1 + ⌈log₂ ℓ⌉, ⌈log₂ n⌉
normalize    top bit pair → secret 2^e, 4^e, zero flag            2⌈log₂ ℓ⌉ + 1
inv_sqrt     quadratic seed + Newton for 1/√x on [1/4, 1)         3 + 4t
public       integer views of public values, range checks         —
coins        local coins seeded by the party's private stream      —
simulator    the honest openings, simulated (ideal world)          —
============ =================================================== ========================

Every primitive works on arrays (any number of instances in the same rounds) and states its
rounds, opened elements and dealer items as a ``cost`` function; a contract test holds the
ledger to them.

Randomness: input shares and dealer material are drawn from a PCG64 generator seeded, per
call, by the party's private AES-CTR mask stream (:mod:`protocols.mpc.coins`): statistically
uniform, replays exactly, and an audit's injected randomness redraws them. A deployment would
draw these from a cryptographic generator as well.
"""
