"""Tests of the benchmarks' own rules (benchmarks/): what a table counts, not what it measures."""
