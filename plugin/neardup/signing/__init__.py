"""Documents and their signatures: the records (``Document``, ``Signed``), the rule for
what a document may hold (``validate``), the signer that makes every key set of a batch
(``signer``), how keys are written for the engines (``encoding``), and the extended
signature family (``signatures/``, named in ``registry``)."""
