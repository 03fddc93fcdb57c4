"""The app's request: a multipart body's file parts go to disk as they are parsed, hashed.

werkzeug's parser keeps a file part under 500 KiB in memory and then rolls it to an anonymous
file; ours writes every file part, a chunk at a time, to a `SpooledFile` (a named temporary
file hashed as it is written, services/imports/files.py), which the statement reader's
process opens by its path. Form fields stay in memory, bounded by Flask's
MAX_FORM_MEMORY_SIZE.
"""

from __future__ import annotations

from typing import IO, Any, cast

from flask import Request
from werkzeug.datastructures import FileStorage

from domain.errors import Unprocessable
from services.imports.files import SpooledFile


class UploadRequest(Request):
    """Flask's request, its file parts spooled to named, hashed temporary files."""

    def _get_file_stream(
        self,
        total_content_length: int | None,
        content_type: str | None,
        filename: str | None = None,
        content_length: int | None = None,
    ) -> IO[bytes]:
        return cast(IO[bytes], SpooledFile())


def spooled(sent: Any, field: str = "file") -> SpooledFile:
    """The file part `sent` as a SpooledFile on disk (copied a chunk at a time when another
    request class spooled it); 422 when `field` was sent as a plain form field."""
    if not isinstance(sent, FileStorage):
        raise Unprocessable(
            "The request is invalid.", details={field: ["Send the statement as a file."]}
        )
    if isinstance(sent.stream, SpooledFile):
        return sent.stream
    spool = SpooledFile.copy_of(sent.stream)
    sent.stream = cast(IO[bytes], spool)  # closed, and removed, with the request
    return spool
