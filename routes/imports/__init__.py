"""Statement imports: upload, draft, rows, commit, undo."""
