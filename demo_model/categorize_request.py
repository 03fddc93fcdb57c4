"""Read a request to categorise the uncategorized rows in bulk ("categorise my imports")."""

from __future__ import annotations

import re

from demo_model.vocabulary import fold

KIND = "categorize_rows"
# "categorise my imported transactions", "sort the uncategorised rows into categories".
ASKED = re.compile(
    r"\b(?:(?:re)?categori[sz]e|assign categories to|(?:suggest|propose) categories for)\s+"
    r"(?:all\s+)?(?:of\s+)?(?:my|the|these|those)?\s*(?:[a-z-]+\s+){0,2}"
    r"(?:transactions|rows|payments|purchases|charges|entries)\b(?!\s+(?:as|to|under)\b)"
    r"|\b(?:sort|organi[sz]e|file|put)\s+(?:all\s+)?(?:of\s+)?(?:my|the|these|those)?\s*"
    r"(?:[a-z-]+\s+){0,2}(?:transactions|rows|payments|purchases|charges|entries)\s+"
    r"(?:into|in|by)\s+(?:their\s+|the\s+|my\s+)?categor(?:y|ies)\b"
)


def categorize_request(question: str) -> tuple[tuple[str, str], ...] | None:
    """The details of a request to categorise the uncategorized rows in bulk, or None.

    "my imported transactions" asks for the rows a statement import added only.
    """
    q = fold(question)
    if not ASKED.search(q):
        return None
    return (("imported", "true"),) if re.search(r"\bimport(ed|s)?\b", q) else ()
