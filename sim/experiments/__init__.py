"""The catalogue entries' run code, by family: ``nmf``, ``svd``, ``cape``, ``dsanls``,
``studies``, and the secure sums (``secure_sum``, ``secagg``) and a user's own program
(``user_program``). The entries themselves are declared in :mod:`sim.catalog`, which names each
entry's functions here as ``"module:function"``; nothing here is imported to list them."""
