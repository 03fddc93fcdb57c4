"""Persistence of turns, messages and tool runs, each write its own short transaction."""
