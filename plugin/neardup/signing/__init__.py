"""Documents and their signatures: the records (``Document``, ``Signed``), the rule for
what a document may hold (``validate``), the signer that makes every key set of a batch
(``signer``), and the extended signature family (``signatures/``, named in
:mod:`neardup.keys.registry`)."""
