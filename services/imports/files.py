"""An uploaded file on disk as it arrives, hashed as it is written; the digest of a file.

The multipart parser writes an upload's file part to a `SpooledFile` (routes/uploads.py
hands it one), a chunk at a time: a named temporary file, which the reader process opens by
its path, and whose SHA-256 (what tells the same file uploaded again) is known once the last
chunk is written. The worker never holds the file's bytes; the file is removed when the
request is closed.
"""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path
from typing import IO, Any

# Read this much at a time when a file is hashed, or copied into a spool.
CHUNK = 64 * 1024


class SpooledFile:
    """A named temporary file that hashes what is written to it; otherwise the file itself
    (read, seek, close: werkzeug's FileStorage wraps it)."""

    def __init__(self) -> None:
        self.file: IO[bytes] = tempfile.NamedTemporaryFile(  # noqa: SIM115  # closed by close()
            prefix="statement-", suffix=".upload"
        )
        self._sha256 = hashlib.sha256()
        self.size = 0

    @property
    def path(self) -> Path:
        """Where the file is, for the reader process."""
        return Path(self.file.name)

    def write(self, data: bytes) -> int:
        """Append `data`, and hash it."""
        self._sha256.update(data)
        self.size += len(data)
        return self.file.write(data)

    def digest(self) -> str:
        """The SHA-256 of what was written, hex; flushes it, for the reader process."""
        self.file.flush()
        return self._sha256.hexdigest()

    def close(self) -> None:
        """Close and remove the file."""
        self.file.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.file, name)

    @classmethod
    def copy_of(cls, stream: IO[bytes]) -> SpooledFile:
        """A spool of what `stream` holds, copied a chunk at a time (a file part werkzeug
        spooled itself)."""
        spool = cls()
        try:
            while chunk := stream.read(CHUNK):
                spool.write(chunk)
        except BaseException:
            spool.close()
            raise
        return spool


def file_digest(source: bytes | Path) -> str:
    """The SHA-256 of a file's bytes (or of the file at a path, read a chunk at a time), hex:
    what tells the same file uploaded again."""
    if not isinstance(source, Path):
        return hashlib.sha256(source).hexdigest()
    with source.open("rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()
