"""One pair of documents compared: why they are (or are not) near-duplicates (``explain``),
the raw character spans behind the shingles they share (``highlight``), and the passages two
texts share word by word (``worddiff``)."""
