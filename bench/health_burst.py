"""/healthz and /metrics latency while a burst of turn requests arrives.

Run: python -m bench.health_burst [--requests 1000] [--seconds 10] [--tokens 10]

Starts the server as `make run` does (gunicorn, one worker, SQLite, the in-process log, the
demo model, the default limits), pinned to core 0, mints `--tokens` tokens for one user, then
sends `--requests` `POST /api/chat/stream` evenly over `--seconds` (each connection is read
to its status line and dropped, as an impatient client does), round-robin over the tokens,
while `/healthz` and `/metrics` are asked in turn every 20 ms on one kept-alive connection.
Prints the health and metrics latencies (p50, p99, max) before and during the burst, and
how the turn requests were answered.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.load import pct

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
PROBE_EVERY = 0.02


def start_server(tmp: str, tokens: int) -> tuple[Any, int, list[str]]:
    """Migrate, seed, mint the tokens and start gunicorn pinned to core 0."""
    env = {
        **os.environ,
        "INSTANCE_PATH": tmp,
        "DATABASE_URL": f"sqlite:///{tmp}/bench.db",
        "LOG_LEVEL": "WARNING",
        "AUDIT_LOG": f"{tmp}/audit.log",
    }
    flask = [str(BIN / "flask"), "--app", "app"]
    for command in (["db-upgrade"], ["seed-demo", "bench"]):
        subprocess.run([*flask, *command], cwd=ROOT, env=env, check=True, capture_output=True)
    minted = [
        subprocess.run(
            [*flask, "create-user", "bench", "--if-missing"],
            cwd=ROOT,
            env=env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        for _ in range(tokens)
    ]
    port = 5950 + os.getpid() % 40
    command = [
        "taskset", "-c", "0", str(BIN / "gunicorn"), "-c", "gunicorn.conf.py",
        "-b", f"127.0.0.1:{port}", "-w", "1", "--backlog", "4096", "app:hosted()",
    ]  # fmt: skip
    server = subprocess.Popen(
        command, cwd=ROOT, env=env, stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL
    )
    return server, port, minted


async def wait_up(port: int) -> None:
    """Poll until the server answers /healthz."""
    for _ in range(200):
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            if (await reader.read()).startswith(b"HTTP/1.1 200"):
                writer.close()
                return
        except OSError:
            pass
        await asyncio.sleep(0.1)
    raise RuntimeError("the server did not start")


async def turn_request(port: int, token: str, codes: collections.Counter[str]) -> None:
    """POST one chat stream and read its status line only, then drop the connection."""
    body = b'{"message": "What did I spend on groceries last month?"}'
    head = (
        f"POST /api/chat/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(head + body)
        line = await asyncio.wait_for(reader.readline(), 30)
        codes[line.split(b" ")[1].decode() if line else "closed"] += 1
        writer.close()
    except (OSError, TimeoutError):
        codes["failed"] += 1


async def probe(port: int, until: float, samples: dict[str, list[float]]) -> None:
    """Ask /healthz and /metrics in turn on one kept-alive connection until `until`."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    paths = ["/healthz", "/metrics"]
    n = 0
    while time.monotonic() < until:
        path = paths[n % 2]
        n += 1
        started = time.perf_counter()
        writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
        await reader.readexactly(length)
        samples[path].append((time.perf_counter() - started) * 1000)
        await asyncio.sleep(PROBE_EVERY)
    writer.close()


async def run(port: int, tokens: list[str], requests: int, seconds: float) -> None:
    """Measure idle, then during the burst; print the table."""
    await wait_up(port)
    idle: dict[str, list[float]] = {"/healthz": [], "/metrics": []}
    await probe(port, time.monotonic() + 3, idle)
    burst: dict[str, list[float]] = {"/healthz": [], "/metrics": []}
    codes: collections.Counter[str] = collections.Counter()
    start = time.monotonic()
    prober = asyncio.create_task(probe(port, start + seconds + 2, burst))
    sent: list[asyncio.Task[None]] = []
    for i in range(requests):
        await asyncio.sleep(max(0.0, start + i * seconds / requests - time.monotonic()))
        sent.append(asyncio.create_task(turn_request(port, tokens[i % len(tokens)], codes)))
    await asyncio.gather(*sent)
    await prober
    print(f"{requests} turn requests in {seconds:.0f} s from {len(tokens)} tokens of one user:")
    print("  answers: " + ", ".join(f"{k}: {v}" for k, v in sorted(codes.items())))
    print(
        f"| {'phase':<6} | {'path':<8} | {'n':>4} | {'p50 ms':>7} | {'p99 ms':>7} | {'max ms':>7} |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for phase, samples in (("idle", idle), ("burst", burst)):
        for path, values in samples.items():
            p50, p99, top = pct(values, 0.5), pct(values, 0.99), max(values, default=float("nan"))
            cells = f"{len(values):>4} | {p50:>7.1f} | {p99:>7.1f} | {top:>7.1f}"
            print(f"| {phase:<6} | {path:<8} | {cells} |")


def main() -> None:
    """Start the server, run the burst, stop the server."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--tokens", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        server, port, tokens = start_server(tmp, args.tokens)
        try:
            os.sched_setaffinity(0, {1})
            asyncio.run(run(port, tokens, args.requests, args.seconds))
        finally:
            server.terminate()
            server.wait(30)


if __name__ == "__main__":
    main()
