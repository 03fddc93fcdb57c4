"""Benchmarks that print ratios measured within one run."""
