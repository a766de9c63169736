"""Indexing: documents in, signed, tagged and stored one batch at a time (``ingest``), the
signing spread over worker processes (``workers``)."""
