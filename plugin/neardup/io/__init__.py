"""Documents in and out of files: which files the paths given name (``files``), reading JSON
Lines, CSV, Parquet and plain text into documents (``reading``), and the records neardup
writes out (``records``)."""
