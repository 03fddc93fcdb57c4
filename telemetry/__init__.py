"""Metrics and the access log."""
