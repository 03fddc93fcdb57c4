"""A request's body as it arrives: bounded, joined in memory, or an upload's in a file.

An upload's body (a path of `Site.upload_paths`) is written to an anonymous temporary file as
it comes (never a name on disk; closed once the request is served or refused): the writes go
to the page cache, no wait worth a thread. `last` is when its latest bytes came, for the
upload's idle deadline.
"""

from __future__ import annotations

import tempfile
from typing import BinaryIO

from server.heads import Refused


class Body:
    """The body of the request being read."""

    __slots__ = ("_parts", "_spool", "last", "limit", "size", "upload")

    def __init__(self, limit: int, upload: bool = False, now: float = 0.0) -> None:
        self.limit, self.upload, self.last, self.size = limit, upload, now, 0
        self._parts: list[bytes] = []
        self._spool: BinaryIO | None = None

    def add(self, data: bytes, now: float) -> None:
        """Take `data`, refusing a body over the limit (413)."""
        self.size += len(data)
        if self.size > self.limit:
            raise Refused.too_large(self.limit)
        if not self.upload:
            self._parts.append(data)
            return
        self.last = now
        if self._spool is None:
            self._spool = tempfile.TemporaryFile(prefix="upload-")  # noqa: SIM115  # see take
        self._spool.write(data)

    def take(self) -> bytes | BinaryIO:
        """The whole body: bytes, or an upload's file rewound, which the request now owns."""
        spool, self._spool = self._spool, None
        if spool is None:
            return b"".join(self._parts)
        spool.flush()
        spool.seek(0)
        return spool

    def discard(self) -> None:
        """Drop what came (a refused request)."""
        if self._spool is not None:
            self._spool.close()
            self._spool = None
        self._parts.clear()
