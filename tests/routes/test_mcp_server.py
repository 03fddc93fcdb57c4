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
    # The write tools are listed: a call waits for the user's approval (test_connector_mcp.py).
    assert "set_budget" in names and "categorize_transaction" in names
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


def _rpc(client: Any, token: str, method: str, **params: Any) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    reply: dict[str, Any] = client.post(
        "/mcp", json=body, headers={"Authorization": f"Bearer {token}"}
    ).json
    return reply


def test_without_server_writes_the_write_tools_are_neither_listed_nor_callable(
    app_config: dict[str, Any], user: tuple[int, str]
) -> None:
    from app import create_app

    app = create_app({**app_config, "MCP_SERVER_WRITES": False})
    try:
        client = app.test_client()
        tools = {t["name"]: t for t in _rpc(client, user[1], "tools/list")["result"]["tools"]}
        assert "set_budget" not in tools and "get_transactions" in tools
        assert tools["get_transactions"]["annotations"]["readOnlyHint"] is True
        called = _rpc(client, user[1], "tools/call", name="set_budget", arguments={})
        assert called["error"]["code"] == -32602 and called["id"] == 1
    finally:
        app.extensions["engine"].close()
        app.extensions["db"].dispose()
