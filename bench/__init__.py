"""Benchmarks: `make bench` (or `python -m bench [NAME...]`) runs every bench/bench_*.py."""
