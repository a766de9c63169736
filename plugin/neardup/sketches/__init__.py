"""From token hashes to sketches, and the exact similarity they stand for: the hash chain
(``mixing``, ``hashing``), ragged batches (``ragged``), shingles (``shingles``), MinHash and
its LSH bands (``minhash``, ``lsh``), SimHash (``simhash``), winnowing and MOD_m
(``sampling``), resemblance and containment (``verify``). Each module of compiled loops
(``*_compiled``) sits beside the rule it speeds up; ``loops`` says which form runs."""
