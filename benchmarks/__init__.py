"""Benchmarks of neardup against its peers: ``python -m benchmarks`` (see README.md here)."""
