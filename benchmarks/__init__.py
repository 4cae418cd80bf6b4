"""Benchmarks: each ``bench_*.py`` module has a ``main()`` that prints one JSON object."""
