"""The prime-field family: GF(p) with vectorised arithmetic, and fixed point into it.

SecureSum (Tsikhanovich thesis, seed 001, §2.2) converts each party's real vector x into a
vector x̂ of a finite field "using a fixed decimal place", adds additive shares in the field and
decodes the sum. The family, one module per job:

* :mod:`~protocols.field.prime` — :class:`PrimeField`, the interface every field implements,
  and primes written as ``"2^a-b"`` (:func:`parse_prime`, :func:`describe_prime`);
* :mod:`~protocols.field.mersenne61` — :class:`Mersenne61Field`, the hot path for
  p = 2^61 − 1 on ``uint64``, with its compiled kernels in
  :mod:`~protocols.field.mersenne61_kernels`;
* :mod:`~protocols.field.small_prime` — :class:`SmallPrimeField`, primes below 2^31 on
  ``int64`` (tiny fields for exhaustive audits, 2^31 − 1);
* :mod:`~protocols.field.galois_field` — :class:`GaloisField`, any other prime through the
  ``galois`` package, and the reference the fast paths are tested against;
* :mod:`~protocols.field.mersenne127` — GF(2^127 − 1) on two 64-bit limbs for the MPC engine,
  with :mod:`~protocols.field.mersenne127_kernels`;
* :mod:`~protocols.field.ranks` and :mod:`~protocols.field.fast_field` — exact compiled ranks
  over the Mersenne fields and an equal field with fast paths for the audits' linear algebra
  (kernels in :mod:`~protocols.field.rank_kernels`);
* :mod:`~protocols.field.fixed_point` — :class:`FixedPoint`, reals into a field and back.

Field elements are plain numpy arrays (``uint64`` for the fast path, ``int64`` or ``object``
for galois fields), so payloads, ledgers and views never hold library-specific types. This
package exports the family's public names and :func:`prime_field`, which picks the field for a
prime.
"""


from __future__ import annotations

from protocols.field.fixed_point import FRAC_BITS, FixedPoint, default_frac_bits
from protocols.field.galois_field import GaloisField
from protocols.field.mersenne61 import MERSENNE61, Mersenne61Field
from protocols.field.prime import PrimeField, describe_prime, parse_prime
from protocols.field.small_prime import SmallPrimeField

__all__ = [
    "FRAC_BITS",
    "MERSENNE61",
    "FixedPoint",
    "GaloisField",
    "Mersenne61Field",
    "PrimeField",
    "SmallPrimeField",
    "default_frac_bits",
    "describe_prime",
    "parse_prime",
    "prime_field",
]


def prime_field(p: int | str) -> PrimeField:
    """GF(p): the uint64 path for 2^61 − 1, int64 below 2^31, galois for any other prime."""
    prime = parse_prime(p)
    if prime == MERSENNE61:
        return Mersenne61Field()
    if prime < (1 << 31):
        return SmallPrimeField(prime)
    return GaloisField(prime)
