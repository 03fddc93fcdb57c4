"""Start the counting MCP server (stdio or streamable HTTP) and a hub on it, for tests."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from pathlib import Path
from typing import Any

from config import Timings
from tests.waits import wait_until, wait_until_async
from tools.mcp_servers.config import load_config
from tools.mcp_servers.links import Credential, McpHub

SERVER = str(Path(__file__).with_name("mcp_server.py"))
ROOT = str(Path(__file__).resolve().parents[2])


def calls(count_file: Path) -> list[str]:
    """The tools the server was called for, in order."""
    return count_file.read_text().split() if count_file.exists() else []


def stdio_spec(count_file: Path, **server: Any) -> dict[str, Any]:
    """The mcpServers entry of the stdio server."""
    env = {"COUNT_FILE": str(count_file), "PYTHONPATH": ROOT, **server.pop("env", {})}
    return {"command": sys.executable, "args": [SERVER], "env": env, **server}


def write_config(path: Path, servers: dict[str, dict[str, Any]]) -> str:
    """Write an MCP_CONFIG file; return its path."""
    path.write_text(json.dumps({"mcpServers": servers}))
    return str(path)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def http_server(count_file: Path, port: int | None = None) -> Iterator[tuple[str, Any]]:
    """The server over streamable HTTP in its own process; yields its URL and the process."""
    port = port or free_port()
    env = {"COUNT_FILE": str(count_file), "PYTHONPATH": ROOT, "PATH": "/usr/bin:/bin"}
    proc = subprocess.Popen(
        [sys.executable, SERVER, "http", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until(lambda: listening(port), 20, "the MCP server never listened")
        yield f"http://127.0.0.1:{port}/mcp", proc
    finally:
        proc.kill()
        proc.wait()


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
    except OSError:
        return False
    return True


@asynccontextmanager
async def running_hub(
    config_path: str, timings: Timings, credential: Credential | None = None
) -> AsyncIterator[McpHub]:
    """A hub on this loop with every server's first listing done."""
    hub = McpHub(load_config(config_path), timings, credential)
    tasks = hub.start()
    try:
        await hub.ready()
        await wait_until_async(lambda: all(link.state == "up" for link in hub.links), 20)
        yield hub
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with suppress(BaseException):
                await task
