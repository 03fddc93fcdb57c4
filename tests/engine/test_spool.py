"""The spool file: frames written through a sliding memory map read back exactly."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from config import Timings
from engine.events.log import split_frames
from engine.events.spool import WINDOW, Spool, kept
from streaming.wire.protocol import encode_event


def frames(n: int, size: int = 150) -> list[bytes]:
    """`n` encoded events with a body of about `size` bytes each."""
    return [encode_event(i + 1, "block_delta", {"text": "x" * size}) for i in range(n)]


def test_frames_across_many_windows_and_larger_than_one_read_back_whole(tmp_path: Path) -> None:
    path = tmp_path / "t.sse"
    big = encode_event(2001, "block_end", {"input": "y" * 3 * WINDOW})
    written = [*frames(2000), big, *frames(10)]
    spool = Spool(path, truncate=True)
    for frame in written:
        spool.write(frame)
    # Before close (a killed process): the padding after the last frame is cut off.
    assert split_frames(kept(path.read_bytes())) == written
    spool.close()
    assert path.read_bytes() == b"".join(written)  # close trims the padding


def test_a_reopened_spool_appends_after_its_frames(tmp_path: Path) -> None:
    path = tmp_path / "t.sse"
    first, second = frames(5), frames(7, size=20_000)
    spool = Spool(path, truncate=True)
    for frame in first:
        spool.write(frame)
    spool.close()
    spool = Spool(path, truncate=False)
    for frame in second:
        spool.write(frame)
    spool.close()
    assert split_frames(path.read_bytes()) == first + second


def test_frames_written_survive_the_process_being_killed(tmp_path: Path) -> None:
    path = tmp_path / "t.sse"
    script = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from engine.events.spool import Spool\n"
        "from streaming.wire.protocol import encode_event\n"
        "spool = Spool(Path(sys.argv[1]), truncate=True)\n"
        "for i in range(3000):\n"
        "    spool.write(encode_event(i + 1, 'block_delta', {'text': str(i)}))\n"
        "os.kill(os.getpid(), 9)\n"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", script, str(path)], cwd=root, check=False)
    assert done.returncode == -9
    got = split_frames(kept(path.read_bytes()))
    assert len(got) == 3000
    assert got[-1] == encode_event(3000, "block_delta", {"text": "2999"})


def test_the_file_grows_once_per_grow_step_not_once_per_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engine.events import spool as spool_module

    grown: list[int] = []
    sizes: list[int] = []
    allocate, truncate = os.posix_fallocate, os.ftruncate
    monkeypatch.setattr(
        spool_module.os,
        "posix_fallocate",
        lambda fd, at, n: (grown.append(at + n), allocate(fd, at, n)),
    )
    monkeypatch.setattr(
        spool_module.os, "ftruncate", lambda fd, n: (sizes.append(n), truncate(fd, n))
    )
    written = frames(4000)  # about 4 * 180 KiB: many windows, under two grow steps
    spool = Spool(tmp_path / "t.sse", truncate=True)
    for frame in written:
        spool.write(frame)
    assert len(b"".join(written)) > 10 * WINDOW
    assert grown == [spool_module.GROW]  # one extension; every window after it is mapped only
    spool.close()
    assert sizes == [len(b"".join(written))]  # close trims to the frames
    assert split_frames((tmp_path / "t.sse").read_bytes()) == written


def test_a_full_disk_is_an_error_on_write_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engine.events import spool as spool_module

    def full(fd: int, at: int, n: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    spool = Spool(tmp_path / "t.sse", truncate=True)
    written = frames(10)
    for frame in written:
        spool.write(frame)
    monkeypatch.setattr(spool_module.os, "posix_fallocate", full)
    with pytest.raises(OSError):
        for frame in frames(20000):  # past the first grow step: the file cannot grow
            spool.write(frame)
    assert split_frames(spool.read(0, len(b"".join(written)))) == written
    spool.close()


def test_the_log_keeps_a_turn_whose_spool_is_full_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio

    from engine.events import spool as spool_module
    from engine.events.memory import MemoryEventLog

    log = MemoryEventLog(str(tmp_path), Timings().log_retain)
    log.open("turn_full")
    for i in range(50):
        log.append("turn_full", "block_delta", {"i": i})

    def full(fd: int, at: int, n: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(spool_module.os, "posix_fallocate", full)
    for i in range(50, 20000):
        log.append("turn_full", "block_delta", {"i": i, "pad": "x" * 40})
    whole = log.snapshot("turn_full", 1)
    assert len(split_frames(whole)) == 20000
    for after in (0, 49, 51, 10000, 19999):
        chunk = asyncio.run(log.read("turn_full", after, 0))
        assert chunk is not None and chunk.last_seq == 20000
        assert split_frames(chunk.frames) == split_frames(whole)[after:]
