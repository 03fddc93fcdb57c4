"""Deterministic demo data for local runs, demos and tests."""

from demo_data.generator import seed_finance

__all__ = ["seed_finance"]
