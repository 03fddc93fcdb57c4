"""An entry's details as MT940 :86: writes them: German `?NN` subfields (`?00` posting text,
`?20`-`?29` and `?60`-`?63` purpose, `?32`-`?33` name), Dutch `/NAME/.../REMI/...` keys, or
free text."""

from __future__ import annotations

import re
from dataclasses import dataclass

_SUBFIELD = re.compile(r"\?(\d{2})")
_KEY = re.compile(r"/([A-Z]{2,4})/")
_PURPOSE = {f"{n:02d}" for n in (*range(20, 30), *range(60, 64))}
_SPACES = re.compile(r"\s+")
_CODED = re.compile(r"\d{3}\?")


@dataclass(frozen=True, slots=True)
class Details:
    """Who the other party is, what the bank calls the movement, and what it was for."""

    name: str = ""
    posting_text: str = ""
    purpose: str = ""


def read_details(text: str) -> Details:
    """The details `text` holds, whichever way it is written."""
    text = text.strip()
    if _CODED.match(text) or text.startswith("?00"):
        return _subfields(text)
    if text.startswith("/") and _KEY.match(text):
        return _keyed(text)
    return Details(purpose=_tidy(text))


def _subfields(text: str) -> Details:
    parts = _SUBFIELD.split(text)
    values: dict[str, str] = {}
    for code, value in zip(parts[1::2], parts[2::2], strict=False):
        values[code] = values.get(code, "") + value
    purpose = "".join(values[c] for c in sorted(values) if c in _PURPOSE)
    name = (values.get("32", "") + values.get("33", "")).strip()
    return Details(_tidy(name), _tidy(values.get("00", "")), _tidy(purpose))


def _keyed(text: str) -> Details:
    parts = _KEY.split(text)
    values: dict[str, str] = {}
    for key, value in zip(parts[1::2], parts[2::2], strict=False):
        values.setdefault(key, value)
    purpose = values.get("REMI", "") or values.get("TRTP", "")
    return Details(_tidy(values.get("NAME", "")), _tidy(values.get("TRTP", "")), _tidy(purpose))


def _tidy(text: str) -> str:
    return _SPACES.sub(" ", text).strip()
