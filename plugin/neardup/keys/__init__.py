"""Signature keys: what every signature is (``signature``), the built-in signatures
(``builtin``), the names of the extended family and where each class lives (``registry``),
and how keys and shingles are written for the engines (``encoding``)."""
