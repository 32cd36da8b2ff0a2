"""Benchmarks: print numbers and ratios; never asserted in tests."""
