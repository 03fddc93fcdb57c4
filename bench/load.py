"""Many concurrent SSE streams against a real server: CPU per event and added latency.

Run: python -m bench.load [STREAMS ...]. The upstream (a loopback Anthropic API pacing events
at 40/s) and the clients run in other processes; only the server's own CPU is counted.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
EVENT_DELAY = 0.025  # 40 events/s per stream
QUESTION = "Am I over budget anywhere?"
BUDGET_US = 50.0


def cpu_seconds(pid: int) -> float:
    """User+system CPU of a process and its children so far."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for p in [pid, *_children(pid)]:
        fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def _children(pid: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    return [int(x) for x in out.split()]


async def one_turn(port: int, token: str) -> tuple[float, int]:
    """POST /api/chat/stream and read it to the end; return (seconds, events)."""
    started = time.monotonic()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    body = json.dumps({"message": QUESTION}).encode()
    writer.write(
        b"POST /api/chat/stream HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        b"Content-Type: application/json\r\nAuthorization: Bearer "
        + token.encode()
        + b"\r\nContent-Length: "
        + str(len(body)).encode()
        + b"\r\n\r\n"
        + body
    )
    await writer.drain()
    events = 0
    while chunk := await reader.read(65536):
        events += chunk.count(b"\nevent: ")
    writer.close()
    return time.monotonic() - started, events


async def run_load(port: int, token: str, streams: int, seconds: float) -> list[tuple[float, int]]:
    """Keep `streams` turns running for `seconds`; return (duration, events) of each turn."""
    done: list[tuple[float, int]] = []
    stop = time.monotonic() + seconds

    async def client(i: int) -> None:
        await asyncio.sleep(i * 2.0 / streams)  # ramp up over two seconds
        while time.monotonic() < stop:
            done.append(await one_turn(port, token))

    await asyncio.gather(*(client(i) for i in range(streams)))
    return done


def start_stack(tmp: str) -> tuple[subprocess.Popen[bytes], subprocess.Popen[str], int, str]:
    """Start the upstream and a one-worker gunicorn server; return them, the port and a token."""
    upstream = subprocess.Popen(
        [sys.executable, "-m", "bench.upstream", str(EVENT_DELAY)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    url = upstream.stdout.readline().strip()  # type: ignore[union-attr]
    env = {
        **os.environ,
        "INSTANCE_PATH": tmp,
        "ANTHROPIC_API_KEY": "bench",
        "ANTHROPIC_BASE_URL": url,
        "LOG_LEVEL": "WARNING",
    }
    flask = [str(BIN / "flask"), "--app", "app"]
    subprocess.run([*flask, "db-upgrade"], cwd=ROOT, env=env, check=True, capture_output=True)
    subprocess.run(
        [*flask, "seed-demo", "bench"], cwd=ROOT, env=env, check=True, capture_output=True
    )
    token = subprocess.run(
        [*flask, "create-user", "bench", "--if-missing"],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    port = 5900 + os.getpid() % 90
    worker = os.environ.get("BENCH_WORKER", "gthread")
    server = subprocess.Popen(
        [
            str(BIN / "gunicorn"),
            "-b",
            f"127.0.0.1:{port}",
            "-w",
            "1",
            "-k",
            worker,
            "--threads",
            "1200",
            "--worker-connections",
            "5000",
            "--timeout",
            "0",
            "app:create_app()",
        ],
        cwd=ROOT,
        env=env,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(3)
    return server, upstream, port, token  # type: ignore[return-value]


def main() -> None:
    """Print, per load level, CPU per event against the 50 us budget and p99 added latency."""
    levels = [int(a) for a in sys.argv[1:]] or [100, 300, 500]
    with tempfile.TemporaryDirectory() as tmp:
        server, upstream, port, token = start_stack(tmp)
        try:
            asyncio.run(one_turn(port, token))  # warm up
            solo = sorted(asyncio.run(one_turn(port, token))[0] for _ in range(3))[1]
            print(f"stream pacing: {1 / EVENT_DELAY:.0f} events/s per stream (loopback upstream)")
            for streams in levels:
                cpu0, t0 = cpu_seconds(server.pid), time.monotonic()
                turns = asyncio.run(run_load(port, token, streams, seconds=15))
                cpu = cpu_seconds(server.pid) - cpu0
                wall = time.monotonic() - t0
                events = sum(n for _, n in turns)
                added = sorted(d - solo for d, _ in turns)
                p99 = max(0.0, added[int(len(added) * 0.99) - 1]) if added else float("nan")
                per_event = cpu / max(events, 1) * 1e6
                print(
                    f"{streams} streams: {events / wall:,.0f} events/s delivered, "
                    f"server CPU per event = {per_event / BUDGET_US:.2f}x the 50 us budget, "
                    f"{cpu / wall:.2f} cores busy, streams per core at 40 events/s = "
                    f"{1e6 / per_event / (1 / EVENT_DELAY):,.0f}, p99 added turn latency = "
                    f"{p99 * 1000 / 100:.2f}x the 100 ms budget"
                )
        finally:
            server.terminate()
            upstream.terminate()
            server.wait(10)


if __name__ == "__main__":
    main()
