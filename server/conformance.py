"""What RFC 9112 has a server refuse in a request head that httptools (llhttp) lets through.

llhttp refuses most malformed heads itself (bare CR or LF, obs-fold, NUL and controls in a
header, Content-Length with Transfer-Encoding, two Content-Lengths, bad chunk sizes). It
accepts several spaces between the parts of a request line, HTTP/0.9, versions other than
1.0 and 1.1, a missing or repeated Host, and transfer codings we do not implement: these
checks refuse them, each with a 400 (501 for a coding) that closes the connection.
"""

from __future__ import annotations

import re

from server.heads import Refused

# method SP request-target SP HTTP-version CRLF, one space each (RFC 9112, section 3).
REQUEST_LINE = re.compile(
    rb"([!#$%&'*+\-.^_`|~0-9A-Za-z]+) ([\x21-\x7e\x80-\xff]+) HTTP/(\d\.\d)\r\n"
)
# An HTTP/0.9 request line: method SP target CRLF, no version.
HTTP_09 = re.compile(rb"[!-~]+ [!-~\x80-\xff]+\r\n")
# origin-form, absolute-form, or asterisk-form (OPTIONS) and authority-form (CONNECT).
ORIGIN_OR_ABSOLUTE = re.compile(rb"/.*|[A-Za-z][A-Za-z0-9+.\-]*://.*", re.DOTALL)
VERSIONS = ("1.0", "1.1")
# host [ ":" port ]: an IP literal, or a reg-name of unreserved, sub-delims and %XX.
HOST = re.compile(
    rb"(\[[0-9A-Fa-f:.]+\]|(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})+)(:[0-9]{0,5})?"
)


def check_request_line(line: bytes) -> None:
    """Refuse a request line (CRLF included) that is not `METHOD target HTTP/1.x`."""
    found = REQUEST_LINE.fullmatch(line)
    if found is None:
        if HTTP_09.fullmatch(line):
            raise Refused(400, "bad_request", "HTTP/0.9 is not served: send HTTP/1.1.")
        raise Refused(
            400,
            "bad_request",
            "The request line must be `METHOD target HTTP/1.1`, one space apart.",
        )
    method, target, version = found.groups()
    if version.decode() not in VERSIONS:
        raise Refused(400, "bad_request", f"HTTP/{version.decode()} is not served: send HTTP/1.1.")
    if not (
        ORIGIN_OR_ABSOLUTE.fullmatch(target)
        or (target == b"*" and method == b"OPTIONS")
        or method == b"CONNECT"
    ):
        raise Refused(400, "bad_request", "The request target must be a path such as /api.")


def check_hosts(values: list[bytes], version: str) -> None:
    """Refuse a missing (HTTP/1.1), repeated or malformed Host header (RFC 9112, 3.2)."""
    if len(values) > 1 or (version == "1.1" and not values):
        raise Refused(400, "bad_request", "A request needs exactly one Host header.")
    if values and HOST.fullmatch(values[0].strip(b" \t")) is None:
        raise Refused(400, "bad_request", "The Host header must be a host[:port].")


def check_transfer_encoding(value: bytes, version: str) -> None:
    """Refuse framing we cannot trust: Transfer-Encoding on HTTP/1.0 (RFC 9112, 6.1), or a
    coding other than chunked alone."""
    if version != "1.1":
        raise Refused(400, "bad_request", "Transfer-Encoding needs HTTP/1.1.")
    if value.strip(b" \t").lower() != b"chunked":
        raise Refused(501, "not_implemented", "Only Transfer-Encoding: chunked is served, alone.")
