"""MCP_CONFIG: the operator's file of MCP servers, in the usual `mcpServers` shape."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

# The Messages API's rule for a tool name.
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
SERVER_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,32}$")
PREFIX = "mcp__"
# In a header's value: the calling user's stored secret for the server.
CREDENTIAL = "{credential}"


class McpConfigError(RuntimeError):
    """MCP_CONFIG cannot be used; the message says where and why."""


@dataclass(frozen=True)
class McpServerConfig:
    """One server: streamable HTTP (`url`, `headers`) or stdio (`command`, `args`, `env`).

    `read_only` tools run without the user's approval; an `idempotent` call left unfinished
    by a worker's death is sent again. Both are the operator's word, never the server's.
    """

    name: str
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    read_only: frozenset[str] = frozenset()
    idempotent: frozenset[str] = frozenset()

    @property
    def per_user(self) -> bool:
        """Whether a header takes the calling user's credential (one connection per user)."""
        return any(CREDENTIAL in value for value in self.headers.values())

    def shared(self) -> McpServerConfig:
        """The connection that lists the tools: without the headers that need a user."""
        kept = {k: v for k, v in self.headers.items() if CREDENTIAL not in v}
        return replace(self, headers=kept)

    def for_user(self, secret: str) -> McpServerConfig:
        """The connection of one user: their secret in the headers that take it."""
        filled = {k: v.replace(CREDENTIAL, secret) for k, v in self.headers.items()}
        return replace(self, headers=filled)

    def tool_name(self, remote: str) -> str:
        """The name the model calls this server's tool `remote` by (valid for the API)."""
        return qualified(self.name, remote)


def qualified(server: str, remote: str) -> str:
    """`mcp__<server>__<tool>`, other characters as `_`; a long one cut and made unique."""
    name = re.sub(r"[^a-zA-Z0-9_-]", "_", f"{PREFIX}{server}__{remote}")
    if len(name) <= 64:
        return name
    digest = hashlib.sha256(f"{server}\0{remote}".encode()).hexdigest()[:8]
    return f"{name[:55]}_{digest}"


def load_config(path: str) -> list[McpServerConfig]:
    """Read and check MCP_CONFIG (empty: no servers)."""
    if not path:
        return []
    try:
        raw = json.loads(Path(path).read_text())
    except (OSError, ValueError) as err:
        raise McpConfigError(f"MCP_CONFIG {path}: {err}") from err
    servers = raw.get("mcpServers") if isinstance(raw, dict) else None
    if not isinstance(servers, dict):
        raise McpConfigError(f"MCP_CONFIG {path}: needs an object under 'mcpServers'")
    return [_server(path, name, spec) for name, spec in servers.items()]


def _server(path: str, name: str, spec: Any) -> McpServerConfig:
    where = f"MCP_CONFIG {path}: server {name!r}"
    if not SERVER_NAME.match(name):
        raise McpConfigError(f"{where}: a name is 1 to 32 letters, digits, '_' or '-'")
    if not isinstance(spec, dict):
        raise McpConfigError(f"{where}: must be an object")
    url, command = spec.get("url"), spec.get("command")
    if (url is None) == (command is None):
        raise McpConfigError(f"{where}: give either 'url' (streamable HTTP) or 'command' (stdio)")
    if url is not None and not (isinstance(url, str) and url.startswith(("http://", "https://"))):
        raise McpConfigError(f"{where}: 'url' must be an http(s) URL")
    if command is not None and not isinstance(command, str):
        raise McpConfigError(f"{where}: 'command' must be text")
    return McpServerConfig(
        name=name,
        url=url,
        headers=_texts(where, spec, "headers"),
        command=command,
        args=tuple(_names(where, spec, "args")),
        env=_texts(where, spec, "env"),
        read_only=frozenset(_names(where, spec, "readOnlyTools")),
        idempotent=frozenset(_names(where, spec, "idempotentTools")),
    )


def _texts(where: str, spec: dict[str, Any], key: str) -> dict[str, str]:
    value = spec.get(key, {})
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise McpConfigError(f"{where}: '{key}' must be an object of texts")
    return dict(value)


def _names(where: str, spec: dict[str, Any], key: str) -> list[str]:
    value = spec.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise McpConfigError(f"{where}: '{key}' must be a list of texts")
    return list(value)
