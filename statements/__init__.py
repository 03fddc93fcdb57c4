"""Bank statement files read into rows: one reader per format, behind `read_statement`."""
