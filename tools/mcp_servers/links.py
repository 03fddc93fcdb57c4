"""Links to MCP servers: one task each on the engine's event loop, reconnecting for ever.

Every MCP exchange (connecting, listing, calling, pinging) runs as asyncio I/O on the
engine's one event loop, as the model streams do: no pool thread and no thread per call.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import random
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import ListenNotSupportedError

from config import Timings
from domain.backoff import Backoff
from tools.mcp_servers.config import McpServerConfig
from tools.registry import ToolOutcome, outcome_of
from tools.search import searchable

log = logging.getLogger(__name__)

State = Literal["connecting", "up", "down"]
UNAVAILABLE = (
    "The MCP server '{server}' is unavailable (down or reconnecting), so its tool '{tool}' "
    "was not run. Try again later."
)
TIMED_OUT = (
    "The MCP server '{server}' did not answer the tool '{tool}' within {seconds:g}s: it may "
    "or may not have run."
)
NEEDS_CREDENTIAL = (
    "The MCP server '{server}' needs the user's credentials, which they have not stored, so "
    "its tool '{tool}' was not run. The user can store them in the app "
    "(PUT /api/mcp/{server}/credentials)."
)
# Per-user connections (servers whose headers take a user's credential) kept open at once.
MAX_USER_LINKS = 64
Credential = Callable[[int, str], Awaitable[str | None]]
FAILED = (
    "The MCP server '{server}' failed during the tool '{tool}' ({error}): it may or may not "
    "have run."
)


@dataclass(frozen=True)
class McpTool:
    """A tool of an MCP server as the model sees it, and what the operator says of it."""

    name: str
    server: str
    remote: str
    definition: dict[str, Any]
    annotations: dict[str, Any] | None
    read_only: bool
    idempotent: bool

    def preview(self, tool_input: dict[str, Any]) -> dict[str, Any]:
        """The approval card: the raw input (a remote tool has no preview), annotations shown."""
        return {
            "summary": f"Call the tool '{self.remote}' of the MCP server '{self.server}'",
            "changes": [],
            "target": {"type": "mcp", "server": self.server, "tool": self.remote},
            "input": tool_input,
            # The server's own hints: shown to the user, never trusted to skip an approval.
            "annotations": self.annotations,
        }


def mcp_tool(config: McpServerConfig, tool: types.Tool) -> McpTool:
    """Our declaration of one listed tool: prefixed name, input schema passed through."""
    name = config.tool_name(tool.name)
    definition = {
        "name": name,
        "description": f"[MCP server {config.name}] {tool.description or tool.name}",
        "input_schema": tool.input_schema,
    }
    annotations = (
        tool.annotations.model_dump(by_alias=True, exclude_none=True) if tool.annotations else None
    )
    return McpTool(
        name,
        config.name,
        tool.name,
        definition,
        annotations,
        tool.name in config.read_only,
        tool.name in config.idempotent,
    )


class ServerLink:
    """One MCP server: connected by a task that reconnects with backoff; its last tool list
    kept while it is down."""

    def __init__(
        self, config: McpServerConfig, timings: Timings, changed: Callable[[], None]
    ) -> None:
        self.config, self.timings, self._changed = config, timings, changed
        self.state: State = "connecting"
        self.tools: dict[str, McpTool] = {}
        self.connects = 0
        self._client: Client | None = None
        self._wake = asyncio.Event()
        self._rng = random.Random()

    async def run(self) -> None:
        """Connect, list, then watch the server (ping, list changes) until it fails; again."""
        t = self.timings
        backoff = Backoff(t.mcp_backoff_base, t.mcp_backoff_cap, self._rng)
        while True:
            try:
                async with self._connect() as client:
                    await self._list(client)
                    self._client, self.state = client, "up"
                    self.connects += 1
                    backoff.reset()
                    await self._watch(client)
            except asyncio.CancelledError:
                raise
            except BaseException as err:  # an ExceptionGroup from the SDK's task groups too
                _raise_if_cancelled(err)
                log.warning("MCP server %s: %s", self.config.name, _describe(err))
            finally:
                self._client = None
            self.state = "down"
            await asyncio.sleep(backoff.next())

    def _connect(self) -> Client:
        c, t = self.config, self.timings
        if c.url is not None:
            http = httpx2.AsyncClient(
                headers=c.headers, timeout=httpx2.Timeout(t.mcp_call_timeout, connect=t.mcp_connect)
            )
            target: Any = streamable_http_client(c.url, http_client=http)
        else:
            assert c.command is not None
            target = StdioServerParameters(command=c.command, args=list(c.args), env=c.env or None)
        return Client(
            target,
            read_timeout_seconds=t.mcp_connect,
            message_handler=self._message,
            cache=None,
        )

    async def _watch(self, client: Client) -> None:
        """List the tools again every MCP_PING and on a list change (a ping that also finds
        a new list; the protocol's own ping is gone from its current version); return, to
        reconnect, when that fails."""
        listener = asyncio.create_task(self._listen(client))
        try:
            while True:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), self.timings.mcp_ping)
                self._wake.clear()
                await self._list(client)
        finally:
            listener.cancel()
            with contextlib.suppress(BaseException):
                await listener
            _raise_if_cancelled()

    async def _listen(self, client: Client) -> None:
        """Wake the watch on each tool-list change (the current protocol's subscription;
        an earlier server's notification arrives through `_message`)."""
        try:
            async with client.listen(tools_list_changed=True) as changes:
                async for _ in changes:
                    self._wake.set()
        except ListenNotSupportedError:
            return
        except Exception as err:
            log.info("MCP server %s: no list changes (%s)", self.config.name, _describe(err))

    async def _list(self, client: Client) -> None:
        listed: list[types.Tool] = []
        cursor: str | None = None
        while True:
            page = await client.list_tools(cursor=cursor, cache_mode="refresh")
            listed.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        tools = {t.name: t for t in (mcp_tool(self.config, tool) for tool in listed)}
        if tools != self.tools:
            self.tools = tools
            self._changed()

    async def _message(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self._wake.set()

    async def call(self, tool: McpTool, arguments: dict[str, Any]) -> ToolOutcome:
        """Call `tool`; a server down, slow or failing is an `is_error` outcome naming it."""
        client, seconds = self._client, self.timings.mcp_call_timeout
        words = {"server": self.config.name, "tool": tool.remote}
        if client is None:
            return ToolOutcome(UNAVAILABLE.format(**words), True)
        try:
            async with asyncio.timeout(seconds):
                result = await client.call_tool(
                    tool.remote, arguments, read_timeout_seconds=seconds
                )
        except TimeoutError:
            return ToolOutcome(TIMED_OUT.format(seconds=seconds, **words), True)
        except Exception as err:
            self._wake.set()  # listing again tells whether the server is still there
            return ToolOutcome(FAILED.format(error=_describe(err), **words), True)
        return result_outcome(self.config.name, result)


def result_outcome(server: str, result: types.CallToolResult) -> ToolOutcome:
    """What the model reads of a tool result: its text parts (other parts as JSON), data only."""
    parts = [
        block.text
        if isinstance(block, types.TextContent)
        else json.dumps(block.model_dump(by_alias=True, exclude_none=True))
        for block in result.content
    ]
    if not parts and result.structured_content is not None:
        parts = [json.dumps(result.structured_content, separators=(",", ":"))]
    text = "\n".join(parts)
    if result.is_error:
        text = f"The MCP server '{server}' answered with an error: {text}"
    outcome = outcome_of(text)
    return ToolOutcome(outcome.content, bool(result.is_error))


def _raise_if_cancelled(cause: BaseException | None = None) -> None:
    """Raise CancelledError when this task was asked to stop: the SDK's task groups may turn
    a cancellation that reaches them into another error (an ExceptionGroup, a ConnectError)
    and swallow it, and a link that went on reconnecting would never stop."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError from cause


def _describe(err: BaseException) -> str:
    if isinstance(err, BaseExceptionGroup) and err.exceptions:
        return _describe(err.exceptions[0])
    return f"{type(err).__name__}: {err}"[:300]


class McpHub:
    """Every configured server's link and tools; the tool list the model is sent."""

    def __init__(
        self,
        configs: Iterable[McpServerConfig],
        timings: Timings,
        credential: Credential | None = None,
    ) -> None:
        self.timings, self._credential = timings, credential
        self._configs = {c.name: c for c in configs}
        self.links = [ServerLink(c.shared(), timings, self._bump) for c in self._configs.values()]
        self._user_links: OrderedDict[tuple[str, int, str], tuple[ServerLink, asyncio.Task[None]]]
        self._user_links = OrderedDict()
        self._version = 0
        self._joined: tuple[int, int, list[dict[str, Any]]] | None = None
        self._by_name: dict[str, tuple[ServerLink, McpTool]] = {}

    def _bump(self) -> None:
        self._version += 1
        self._by_name = {n: (link, t) for link in self.links for n, t in link.tools.items()}

    def start(self) -> list[asyncio.Task[None]]:
        """On the engine's loop: one task per server."""
        loop = asyncio.get_running_loop()
        return [loop.create_task(link.run(), name=f"mcp:{link.config.name}") for link in self.links]

    async def ready(self) -> None:
        """Wait (up to MCP_CONNECT) for every server's first connection or failure."""
        deadline = loop_time() + self.timings.mcp_connect
        while any(link.state == "connecting" for link in self.links) and loop_time() < deadline:
            await asyncio.sleep(0.01)

    def get(self, name: str) -> McpTool | None:
        """The MCP tool the model calls `name`, if any (listed now, or before a server fell)."""
        found = self._by_name.get(name)
        return found[1] if found else None

    def definitions(
        self, base: list[dict[str, Any]], eager: bool, threshold: int = 0
    ) -> list[dict[str, Any]]:
        """`base` then every server's tools (deferred past `threshold`, see tools/search.py);
        the same list object until a list changes, so the prompt cache sees the same bytes
        (also while a server is down)."""
        joined = self._joined
        if joined is not None and joined[0] == id(base) and joined[1] == self._version:
            return joined[2]
        extra = [t.definition for link in self.links for t in link.tools.values()]
        if eager:
            extra = [{**d, "eager_input_streaming": True} for d in extra]
        tools = searchable(base, extra, threshold)
        self._joined = (id(base), self._version, tools)
        return tools

    async def call(self, name: str, arguments: dict[str, Any], user_id: int) -> ToolOutcome:
        """Call the MCP tool `name` for `user_id` (see ServerLink.call); a server whose
        headers take a user's credential is called on that user's own connection."""
        link, tool = self._by_name[name]
        config = self._configs.get(tool.server)
        if config is not None and config.per_user:
            secret = await self._credential(user_id, tool.server) if self._credential else None
            if secret is None:
                return ToolOutcome(
                    NEEDS_CREDENTIAL.format(server=tool.server, tool=tool.remote), True
                )
            link = await self._user_link(config, user_id, secret)
        return await link.call(tool, arguments)

    async def _user_link(self, config: McpServerConfig, user_id: int, secret: str) -> ServerLink:
        """The user's connection to `config` with this secret (a new secret: a new one)."""
        key = (config.name, user_id, hashlib.sha256(secret.encode()).hexdigest())
        found = self._user_links.get(key)
        if found is None:
            link = ServerLink(config.for_user(secret), self.timings, lambda: None)
            task = asyncio.get_running_loop().create_task(link.run(), name=f"mcp:{config.name}")
            found = self._user_links[key] = (link, task)
            while len(self._user_links) > MAX_USER_LINKS:
                _, (_, oldest) = self._user_links.popitem(last=False)
                oldest.cancel()
        self._user_links.move_to_end(key)
        link = found[0]
        deadline = loop_time() + self.timings.mcp_connect
        while link.state == "connecting" and loop_time() < deadline:
            await asyncio.sleep(0.01)
        return link

    def takes_credential(self, server: str) -> bool:
        """Whether `server` is configured and its headers take a user's credential."""
        config = self._configs.get(server)
        return config is not None and config.per_user

    def close(self) -> list[asyncio.Task[None]]:
        """Cancel the users' connections (the engine cancels the shared ones); return them."""
        tasks = [task for _, task in self._user_links.values()]
        for task in tasks:
            task.cancel()
        self._user_links.clear()
        return tasks

    def sources(self) -> list[dict[str, Any]]:
        """Each server with its state and tools (the tools panel)."""
        return [
            {
                "name": link.config.name,
                "kind": "mcp",
                "state": link.state,
                "tools": [
                    {
                        "name": t.name,
                        "remote": t.remote,
                        "description": t.definition["description"],
                        "read_only": t.read_only,
                        "annotations": t.annotations,
                    }
                    for t in link.tools.values()
                ],
            }
            for link in self.links
        ]


def loop_time() -> float:
    """The running loop's clock."""
    return asyncio.get_running_loop().time()
