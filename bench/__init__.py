"""Benchmarks that print measured figures as JSON (no thresholds): ``python -m bench``."""
