"""Benchmarks: each compares tabletop with the best alternative in one run, as a ratio."""
