"""What the reader processes' zygote (multiprocessing's forkserver) loads once, so that each
reader it forks starts with it: every reader, and the CLDR data of the languages the readers
know (month names, number marks), which babel would otherwise load in every reader again."""

from __future__ import annotations

from statements import isolated
from statements.amounts import NumberStyle
from statements.dates import LANGUAGES, DateStyle, month_names

# The locales whose marks and date order are loaded before a file asks for them.
LOCALES = ("en_US", "en_GB", "de_DE", "fr_FR", "es_ES", "it_IT", "nl_NL", "pt_PT", "pl_PL")


def warm() -> None:
    """Load the readers' CLDR data into this process's caches."""
    month_names(None)
    for language in LANGUAGES:
        month_names(language)
    for locale in LOCALES:
        NumberStyle.of(locale)
        DateStyle.of(locale)


warm()
__all__ = ["isolated", "warm"]
