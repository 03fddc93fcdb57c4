"""An append-only file of a turn's frames, written through a memory map instead of write().

A write() per frame dirties the file's inode every time (its mtime), which costs ext4 a
journal update per event; stores into a shared mapping cost a copy, and the kernel keeps
them when the process is killed. Only a window of the file is mapped, so a long turn holds
no more memory than the window. Bytes past the last frame read as NULs until `close`
trims them; frames never contain a NUL (their JSON escapes it), so a reader cuts there.
"""

from __future__ import annotations

import errno
import mmap
import os
from pathlib import Path

# Mapped pages count towards the process's memory, so the window is small; but each move of
# it costs an unmap and a map (with 16 KiB windows, about 7% of a loaded worker's CPU).
WINDOW = 64 * 1024
# The file grows this much at a time, so its size, an inode update in the filesystem's
# journal, changes once per GROW bytes, not per window.
GROW = 1024 * 1024
PAGE = mmap.ALLOCATIONGRANULARITY


class Spool:
    """Appends bytes to one file through a sliding memory-mapped window."""

    __slots__ = ("_end", "_fd", "_length", "_map", "_start", "size")

    def __init__(self, path: Path, truncate: bool) -> None:
        flags = os.O_RDWR | os.O_CREAT | (os.O_TRUNC if truncate else 0)
        self._fd = os.open(path, flags, 0o600)
        self.size = 0 if truncate else len(kept(path.read_bytes()))
        self._length = os.fstat(self._fd).st_size
        self._map: mmap.mmap | None = None
        self._start = self._end = 0

    def write(self, data: bytes) -> None:
        """Append `data`; it survives this process being killed as soon as this returns.

        Raises OSError (ENOSPC: the disk is full) when the file cannot grow; nothing is lost
        of what was written before.
        """
        size, end = self.size, self.size + len(data)
        if end > self._end:
            self._remap(size, len(data))
        assert self._map is not None
        self._map[size - self._start : end - self._start] = data
        self.size = end

    def read(self, start: int, end: int) -> bytes:
        """Return the bytes written between offsets `start` and `end`."""
        # The page cache is shared with the mapping: a read sees every store made through it.
        return os.pread(self._fd, end - start, start)

    def close(self) -> None:
        """Unmap, trim the file to its frames and close it."""
        if self._map is not None:
            self._map.close()
            self._map = None
        os.ftruncate(self._fd, self.size)
        os.close(self._fd)

    def _remap(self, at: int, need: int) -> None:
        if self._map is not None:
            self._map.close()
        start = at - at % PAGE
        length = max(WINDOW, (at - start) + need + PAGE)
        if start + length > self._length:
            grown = max(start + length, self._length + GROW)
            _allocate(self._fd, self._length, grown)
            self._length = grown
        self._map = mmap.mmap(self._fd, length, offset=start)
        self._start, self._end = start, start + length


def _allocate(fd: int, start: int, end: int) -> None:
    """Give the file real disk blocks up to `end`, raising OSError if the disk is full.

    Touching a mapped page past the end of the file, or a sparse page of a full disk, kills
    the process with SIGBUS; allocating first turns both into an exception here.
    """
    try:
        os.posix_fallocate(fd, start, end - start)
    except OSError as err:
        if err.errno not in (errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL):
            raise
        os.ftruncate(fd, end)  # a filesystem without fallocate: sparse, as before


def kept(blob: bytes) -> bytes:
    """The frames of a spool file: what precedes the NUL padding of a mapped window."""
    cut = blob.find(b"\0")
    return blob if cut < 0 else blob[:cut]
