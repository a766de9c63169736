"""Documents in and out of files: which files the paths given name (``files``), reading them
into documents (``reading``: JSON Lines in ``jsonl``, CSV and Parquet in ``tables``, plain
text in ``text``, character encodings in ``encodings``), where each id was read (``locate``),
and the records neardup writes out (``records``)."""
