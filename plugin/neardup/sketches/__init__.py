"""From token hashes to sketches, and the exact similarity they stand for: the hash chain
(``mixing``, ``hashing``), ragged batches (``ragged``), shingles (``shingles``), MinHash and
its LSH bands (``minhash``, ``lsh``), SimHash (``simhash``), winnowing and MOD_m
(``sampling``), resemblance and containment (``verify``). Each module of loops
(``*_loops``: Python, and its C form ``_*_loops`` built at install) sits beside the rule it
speeds up; ``loops`` says which form runs."""
