"""Documents in and out of files: reading JSON Lines, CSV, Parquet, plain text and
directories of them into documents (``reading``), and the records neardup writes out
(``records``)."""
