"""Statement imports: a parsed file becomes a reviewed draft, then transactions, or is undone."""
