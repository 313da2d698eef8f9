"""Benchmarks: side-by-side ratios against the released upstream and the machine's limits."""
