"""Many concurrent SSE streams against the real server: the table issue 11 asks for.

Run: python -m bench.load [--config single|cluster] [--workers N] [--ramp SECONDS] [STREAMS ...]

The server runs as `make run` runs it (gunicorn with gunicorn.conf.py; `single` is SQLite and
the in-process log, `cluster` PostgreSQL + Redis with WORKERS workers), pinned to core 0; the
load generator (a paced upstream at 40 text events/s per stream, after a tool round, and the
clients) runs pinned to core 1. Only the server's CPU and memory are counted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from statistics import median
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
# The steady state: seconds after the ramp, when every tool round is over, to the time
# the first 30 s answers end.
SETTLE, LAST = 8.0, 27.0
PG_ADMIN = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
# A Redis database of its own, emptied after the run.
EVENT_LOG = "redis://127.0.0.1:6379/15"


def proc_tree(pid: int) -> list[int]:
    """The pid and its children (gunicorn's master and workers)."""
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    return [pid, *(int(x) for x in out.split())]


def cpu_seconds(pids: list[int]) -> float:
    """User+system CPU of these processes so far."""
    ticks, total = os.sysconf("SC_CLK_TCK"), 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def rss_kib(pids: list[int]) -> int:
    """Resident memory of these processes now, in KiB."""
    total = 0
    for pid in pids:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        total += int(status.split("VmRSS:")[1].split()[0])
    return total


def pct(values: list[float], q: float) -> float:
    """The q-quantile of `values` (nan if empty)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def database(config: str, tmp: str) -> str:
    """A fresh database for the run: SQLite in `tmp`, or a new PostgreSQL database."""
    if config == "single":
        return f"sqlite:///{tmp}/bench.db"
    name = f"chat_bench_{os.getpid()}"
    pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)', f'CREATE DATABASE "{name}"')
    return PG_ADMIN.rsplit("/", 1)[0] + f"/{name}"


def pg_admin(*statements: str) -> None:
    """Run statements on the PostgreSQL server outside a transaction (CREATE/DROP DATABASE)."""
    from sqlalchemy import create_engine, text

    admin = create_engine(PG_ADMIN, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        for statement in statements:
            conn.execute(text(statement))
    admin.dispose()


def start_server(args: argparse.Namespace, upstream: str, tmp: str) -> tuple[Any, int, str]:
    """Migrate, seed and start gunicorn pinned to core 0; return it, its port and a token."""
    env = {
        **os.environ,
        "INSTANCE_PATH": tmp,
        "DATABASE_URL": database(args.config, tmp),
        "ANTHROPIC_API_KEY": "bench",
        "ANTHROPIC_BASE_URL": upstream,
        "LOG_LEVEL": "WARNING",
        "PROMPT_CACHE": "off",
        # Every stream is the one bench user's turn, started with its one token.
        "USER_MAX_CONCURRENT_TURNS": "100000",
        "RATE_LIMIT": "off",
        "SESSION_RATE_LIMIT": "off",
    }
    workers = "1"
    if args.config == "cluster":
        env["EVENT_LOG_URL"] = EVENT_LOG
        workers = str(args.workers)
    flask = [str(BIN / "flask"), "--app", "app"]
    for command in (["db-upgrade"], ["seed-demo", "bench"]):
        subprocess.run([*flask, *command], cwd=ROOT, env=env, check=True, capture_output=True)
    token = subprocess.run(
        [*flask, "create-user", "bench", "--if-missing"],
        cwd=ROOT, env=env, check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    port = 5800 + os.getpid() % 150
    command = [
        "taskset", "-c", "0", str(BIN / "gunicorn"), "-c", "gunicorn.conf.py",
        "-b", f"127.0.0.1:{port}", "-w", workers, "--backlog", "4096",
        "app:hosted()",
    ]  # fmt: skip
    server = subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.DEVNULL)
    time.sleep(4)
    return server, port, token


def clear_events() -> None:
    """Empty the bench's own Redis database (the event log would keep its turns an hour)."""
    import redis

    client = redis.Redis.from_url(EVENT_LOG)
    client.flushdb()
    client.close()


def run_level(
    gen: Any, server: Any, port: int, token: str, streams: int, ramp: float
) -> dict[str, Any]:
    """Drive one level and measure the server while it runs."""
    pids = proc_tree(server.pid)
    base_rss, peak = rss_kib(pids), [0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.25):
            peak[0] = max(peak[0], rss_kib(pids))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    cpu0, gen0, wall0 = cpu_seconds(pids), cpu_seconds([gen.pid]), time.monotonic()
    # The steady state: every stream past its tool round and streaming text, none ended.
    window = (wall0 + ramp + SETTLE, wall0 + max(LAST, ramp + SETTLE + 5.0))
    window_cpu: list[float] = []

    def measure_window() -> None:
        for moment in window:
            time.sleep(max(0.0, moment - time.monotonic()))
            window_cpu.append(cpu_seconds(pids))

    threading.Thread(target=measure_window, daemon=True).start()
    gen.stdin.write(f"{port} {token} {streams} {ramp} {window[0]} {window[1]}\n")
    gen.stdin.flush()
    stats = json.loads(gen.stdout.readline())
    cpu, wall = cpu_seconds(pids) - cpu0, time.monotonic() - wall0
    gen_cpu = cpu_seconds([gen.pid]) - gen0
    done.set()
    sampler.join()
    return {
        "streams": streams,
        "completed": stats["completed"],
        "errors": stats["errors"],
        "ttfb": (pct(stats["ttfb"], 0.5), pct(stats["ttfb"], 0.99)),
        "latency": (
            median(stats["latency"]) if stats["latency"] else float("nan"),
            pct(stats["latency"], 0.99),
            max(stats["latency"], default=float("nan")),
        ),
        "steady_latency_p99": pct(stats["window_latency"], 0.99),
        "cpu_us_per_event": cpu / max(stats["events"], 1) * 1e6,
        "steady_us_per_event": (window_cpu[1] - window_cpu[0])
        / max(stats["window_events"], 1)
        * 1e6
        if len(window_cpu) == 2
        else float("nan"),
        "rss_kib_per_stream": max(0, peak[0] - base_rss) / streams,
        "cores": cpu / wall,
        # Near 1.0 the load generator, not the server, sets the latencies measured.
        "load_cores": gen_cpu / wall,
        "cpu_ms_per_turn": cpu / max(stats["completed"], 1) * 1e3,
        "events_per_s": stats["events"] / wall,
    }


def main() -> None:
    """Print one row per level: the issue's table."""
    parser = argparse.ArgumentParser()
    parser.add_argument("levels", nargs="*", type=int, default=[50, 100, 200, 500, 1000])
    parser.add_argument("--config", choices=["single", "cluster"], default="single")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--events", type=int, default=1200, help="text events per answer")
    parser.add_argument(
        "--ramp", type=float, default=2.0, help="seconds over which a level's streams start"
    )
    args = parser.parse_args()
    gen = subprocess.Popen(
        ["taskset", "-c", "1", sys.executable, "-m", "bench.loadgen", str(args.events)],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    upstream = gen.stdout.readline().strip()  # type: ignore[union-attr]
    with tempfile.TemporaryDirectory() as tmp:
        server, port, token = start_server(args, upstream, tmp)
        try:
            run_level(gen, server, port, token, 5, 2.0)  # warm up
            workers = args.workers if args.config == "cluster" else 1
            print(
                f"{args.config} config, {workers} worker(s), {args.events} text events per "
                f"answer at 40/s after a tool round, streams started over {args.ramp:g} s; "
                "server on core 0, load on core 1"
            )
            print(
                "streams | completed/errors | TTFB p50/p99 ms | added latency p50/p99/max ms "
                "| CPU us per text event | peak RSS per stream KiB"
            )
            for streams in args.levels:
                r = run_level(gen, server, port, token, streams, args.ramp)
                ttfb, lat = r["ttfb"], r["latency"]
                print(
                    f"{streams} | {r['completed']}/{r['errors']} | {ttfb[0] * 1e3:.0f}/"
                    f"{ttfb[1] * 1e3:.0f} | {lat[0] * 1e3:.1f}/{lat[1] * 1e3:.1f}/"
                    f"{lat[2] * 1e3:.1f} | {r['cpu_us_per_event']:.1f} | "
                    f"{r['rss_kib_per_stream']:.0f} (steady state {r['steady_us_per_event']:.1f} us"
                    f" per event, latency p99 {r['steady_latency_p99'] * 1e3:.1f} ms; "
                    f"{r['events_per_s']:,.0f} events/s, "
                    f"{r['cpu_ms_per_turn']:.1f} ms CPU per turn, "
                    f"{r['cores']:.2f} cores; load generator {r['load_cores']:.2f})",
                    flush=True,
                )
        finally:
            server.terminate()
            server.wait(40)
            if args.config == "cluster":  # leave no database and no events behind
                pg_admin(f'DROP DATABASE IF EXISTS "chat_bench_{os.getpid()}" WITH (FORCE)')
                clear_events()
            gen.terminate()


if __name__ == "__main__":
    main()
