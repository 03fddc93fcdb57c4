"""Our read tools at /mcp, to a real MCP client (the mcp SDK) holding a user's token."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from demo_data.generator import seed_finance
from tests.conftest import make_user
from tests.live import LiveServer


def session_with(url: str, token: str | None) -> Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http = httpx2.AsyncClient(headers=headers, timeout=10)
    return Client(streamable_http_client(url, http_client=http), cache=None)


async def balances(url: str, token: str) -> tuple[list[str], Any]:
    async with session_with(url, token) as client:
        listed = await client.list_tools()
        result = await client.call_tool("get_account_balances", {})
        return [t.name for t in listed.tools], result


def test_a_client_with_a_users_token_lists_read_tools_and_reads_that_users_data(
    live: LiveServer, user: tuple[int, str]
) -> None:
    db = live.app.extensions["db"]
    seed_finance(db, user[0], months=2, seed=5)
    bob = make_user(db, "bob")
    names, mine = asyncio.run(balances(f"{live.url}/mcp", user[1]))
    assert "get_account_balances" in names and "get_transactions" in names
    assert "set_budget" not in names and "categorize_transaction" not in names
    accounts = json.loads(mine.content[0].text)["accounts"]
    assert accounts and not mine.is_error
    # The rows the figures rest on, as the chat's citations carry them.
    [source, *_] = mine.structured_content["sources"]
    assert source["type"] == "search_result"
    _, theirs = asyncio.run(balances(f"{live.url}/mcp", bob[1]))
    assert json.loads(theirs.content[0].text)["accounts"] == []  # bob has none of alice's


def test_a_request_without_a_valid_token_is_401(live: LiveServer) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    for headers in ({}, {"Authorization": "Bearer not-a-token"}):
        reply = httpx2.post(f"{live.url}/mcp", json=body, headers=headers, timeout=10)
        assert reply.status_code == 401
        assert reply.json()["error"]["code"] in ("unauthorized", "invalid_token")


def test_a_write_tool_cannot_be_called(live: LiveServer, user: tuple[int, str]) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "set_budget", "arguments": {}},
    }
    auth = {"Authorization": f"Bearer {user[1]}"}
    reply = httpx2.post(f"{live.url}/mcp", json=body, headers=auth, timeout=10).json()
    assert reply["error"]["code"] == -32602 and reply["id"] == 7
