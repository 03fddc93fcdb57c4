"""Bytes of a text file decoded in the encoding they were written in (charset-normalizer)."""

from __future__ import annotations

from charset_normalizer import from_bytes

from statements.parsed import unparsable

BOMS = (("utf-8-sig", b"\xef\xbb\xbf"), ("utf-16", b"\xff\xfe"), ("utf-16", b"\xfe\xff"))
# How much of a file the encoding is guessed from (the guess is slow on megabytes).
SAMPLE = 256 * 1024


def looks_binary(data: bytes) -> bool:
    """True for a file with NUL bytes and no UTF-16 mark: no statement format is binary."""
    return b"\x00" in data[:SAMPLE] and not data.startswith((b"\xff\xfe", b"\xfe\xff"))


def as_utf8(data: bytes) -> bytes:
    """UTF-16 text (with its mark, or without one: every other byte of its first part NUL) as
    UTF-8, so every reader sees one encoding of it; NUL bytes that pad a file's end dropped
    (a lone one too, in a file that is not UTF-16); other bytes as they are."""
    data = data.rstrip(b"\x00") if data.endswith(b"\x00\x00") else data
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return _decode(data, "utf-16").encode("utf-8")
    head = data[:1024]
    if len(head) >= 8:
        odd, even = head[1::2].count(0), head[0::2].count(0)
        if odd > 0.4 * len(head) / 2 and even == 0:
            return _decode(data, "utf-16-le").encode("utf-8")
        if even > 0.4 * len(head) / 2 and odd == 0:
            return _decode(data, "utf-16-be").encode("utf-8")
    return data.rstrip(b"\x00") if data.endswith(b"\x00") else data


def decode(data: bytes) -> str:
    """`data` as text: UTF-8 (with or without a mark), UTF-16 by its mark, else the guessed
    encoding of its first part; 422 when it is no text at all."""
    for encoding, mark in BOMS:
        if data.startswith(mark):
            return _decode(data, encoding)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    best = from_bytes(data[:SAMPLE]).best()
    if best is None or best.encoding is None:
        raise unparsable("it is not text in any encoding we recognise.")
    return _decode(data, best.encoding)


def _decode(data: bytes, encoding: str) -> str:
    try:
        return data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as err:
        at = getattr(err, "start", None)
        raise unparsable(f"it is not valid {encoding}.", byte=at) from err
