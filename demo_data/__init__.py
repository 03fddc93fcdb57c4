"""Deterministic demo data for local runs, demos and tests."""

from demo_data.finance import seed_finance

__all__ = ["seed_finance"]
