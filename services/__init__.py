"""Reads and simple writes the HTTP routes ask for, each in one short transaction."""
