"""What a neardup process runs on: the one retry policy (``retry``), the C allocator's
handling of freed memory (``allocator``), tables derived once per machine and kept on disk
(``tablecache``), the bundled JSON resources (``resources``) and the masking of credentials
in output (``redact``)."""
