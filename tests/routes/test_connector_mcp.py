"""/mcp on both protocol revisions (2026-07-28 per-request envelopes, 2025-11-25 initialize),
and write tools that change nothing before the user approves them, then run once."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from typing import Any

import httpx2
import mcp_types as mt
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from demo_data.generator import seed_finance
from tests.connector import register, tokens_for
from tests.live import LiveServer

MODERN = "2026-07-28"
BUDGET = {"category": "groceries", "amount": "123.45"}


@pytest.fixture
def seeded(live: LiveServer, user: tuple[int, str]) -> LiveServer:
    seed_finance(live.app.extensions["db"], user[0], months=2, seed=5)
    return live


def token_client(live: LiveServer, token: str, mode: str, **kwargs: Any) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=10)
    transport = streamable_http_client(f"{live.url}/mcp", http_client=http)
    return Client(transport, mode=mode, cache=None, **kwargs)


def envelope(
    method: str, params: dict[str, Any] | None = None, version: str = MODERN
) -> dict[str, Any]:
    meta = {
        mt.PROTOCOL_VERSION_META_KEY: version,
        mt.CLIENT_CAPABILITIES_META_KEY: {},
        mt.CLIENT_INFO_META_KEY: {"name": "raw", "version": "1"},
    }
    return {
        "jsonrpc": "2.0",
        "id": 7,
        "method": method,
        "params": {**(params or {}), "_meta": meta},
    }


def post(live: LiveServer, body: dict[str, Any], **headers: str) -> httpx2.Response:
    return live.http.post("/mcp", json=body, headers=headers)


def budgets(live: LiveServer) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = live.get("/api/budgets").json()["budgets"]
    return found


def test_both_revisions_list_and_call_the_same_tools(
    seeded: LiveServer, user: tuple[int, str]
) -> None:
    async def run(mode: str) -> tuple[str | None, list[str], str]:
        async with token_client(seeded, user[1], mode) as client:
            session = client.session
            listed = await client.list_tools()
            result = await client.call_tool("get_account_balances", {})
            version = (
                session.initialize_result.protocol_version
                if session.initialize_result
                else (
                    session.discover_result.supported_versions[0]
                    if session.discover_result
                    else None
                )
            )
            return version, [t.name for t in listed.tools], result.content[0].text

    legacy = asyncio.run(run("legacy"))
    modern = asyncio.run(run(MODERN))
    probed = asyncio.run(run("auto"))  # the SDK's probe: server/discover, then modern
    assert legacy[0] == "2025-11-25" and modern[0] == MODERN and probed[0] == MODERN
    assert legacy[1] == modern[1] == probed[1]
    assert json.loads(legacy[2]) == json.loads(modern[2]) == json.loads(probed[2])


def test_modern_envelope_headers_versions_and_results(live: LiveServer) -> None:
    discover = post(
        live,
        envelope("server/discover"),
        **{"MCP-Protocol-Version": MODERN, "Mcp-Method": "server/discover"},
    )
    result = discover.json()["result"]
    assert discover.status_code == 200 and result["resultType"] == "complete"
    assert result["supportedVersions"][:2] == [MODERN, "2025-11-25"]
    assert result["_meta"][mt.SERVER_INFO_META_KEY]["name"] == "finance-chat"
    assert result["capabilities"]["tools"] == {"listChanged": False}
    listed = post(
        live, envelope("tools/list"), **{"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list"}
    )
    tools = listed.json()["result"]
    assert (
        tools["cacheScope"] == "private"
        and tools["ttlMs"] > 0
        and tools["resultType"] == "complete"
    )
    # The envelope's version and the header must agree; a header must name the method.
    mismatch = post(
        live,
        envelope("tools/list"),
        **{"MCP-Protocol-Version": "2025-11-25", "Mcp-Method": "tools/list"},
    )
    assert mismatch.status_code == 400 and mismatch.json()["error"]["code"] == mt.HEADER_MISMATCH
    unnamed = post(live, envelope("tools/list"), **{"MCP-Protocol-Version": MODERN})
    assert unnamed.status_code == 400 and unnamed.json()["error"]["code"] == mt.HEADER_MISMATCH
    unknown = post(
        live,
        envelope("tools/list", version="1900-01-01"),
        **{"MCP-Protocol-Version": "1900-01-01", "Mcp-Method": "tools/list"},
    )
    error = unknown.json()["error"]
    assert unknown.status_code == 400 and error["code"] == mt.UNSUPPORTED_PROTOCOL_VERSION
    assert error["data"] == {
        "supported": [MODERN, "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"],
        "requested": "1900-01-01",
    }
    missing = post(
        live,
        envelope("resources/list"),
        **{"MCP-Protocol-Version": MODERN, "Mcp-Method": "resources/list"},
    )
    assert missing.status_code == 404 and missing.json()["error"]["code"] == mt.METHOD_NOT_FOUND


def test_legacy_initialize_negotiates_a_handshake_revision(live: LiveServer) -> None:
    def initialize(version: str) -> dict[str, Any]:
        params = {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "x", "version": "1"},
        }
        reply = post(live, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
        assert reply.status_code == 200
        result: dict[str, Any] = reply.json()["result"]
        return result

    # initialize is the legacy handshake: a 2026-07-28 client does not send it (versioning).
    assert initialize(MODERN)["protocolVersion"] == "2025-11-25"
    assert initialize("2025-06-18")["protocolVersion"] == "2025-06-18"
    assert "resultType" not in initialize("2025-11-25")
    ping = post(
        live,
        {"jsonrpc": "2.0", "id": 2, "method": "ping"},
        **{"MCP-Protocol-Version": "2025-11-25"},
    )
    assert ping.json()["result"] == {}
    odd = post(
        live,
        {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
        **{"MCP-Protocol-Version": "1999-01-01"},
    )
    assert odd.status_code == 400 and odd.json()["error"]["code"] == mt.UNSUPPORTED_PROTOCOL_VERSION
    note = post(live, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert note.status_code == 202 and note.content == b""


def call(live: LiveServer, arguments: dict[str, Any], name: str = "set_budget") -> dict[str, Any]:
    body = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    result: dict[str, Any] = post(live, body).json()["result"]
    return result


def test_a_write_waits_for_approval_in_the_page_then_runs_once(seeded: LiveServer) -> None:
    before = budgets(seeded)
    waiting = call(seeded, BUDGET)
    assert waiting["isError"] is False
    assert waiting["structuredContent"]["status"] == "awaiting_approval"
    assert waiting["content"][0]["text"].startswith("Not done yet: this change waits")
    assert budgets(seeded) == before  # nothing changed
    assert (
        call(seeded, BUDGET)["structuredContent"]["action"]
        == waiting["structuredContent"]["action"]
    )
    [action] = seeded.get("/api/connector-actions").json()["actions"]
    assert action["status"] == "awaiting_approval" and action["client"].startswith("API token")
    assert [c["after"] for c in action["preview"]["changes"]] == ["123.45 USD"]
    decided = seeded.post(f"/api/connector-actions/{action['id']}", json={"approved": True}).json()
    assert decided["status"] == "done" and decided["approval"] == "approved"
    groceries = [
        b for b in budgets(seeded) if b["category"].lower() == "groceries" and b["month"] is None
    ]
    assert [b["limit"] for b in groceries] == ["123.45"]
    # Approving again changes nothing; declining now is a conflict.
    again = seeded.post(f"/api/connector-actions/{action['id']}", json={"approved": True})
    assert again.status_code == 200 and again.json()["finished_at"] == decided["finished_at"]
    late = seeded.post(f"/api/connector-actions/{action['id']}", json={"approved": False})
    assert late.status_code == 409
    # The app learns the outcome by calling again; after that the same call is a new request.
    done = call(seeded, BUDGET)
    assert (
        done["isError"] is False
        and json.loads(done["content"][0]["text"])["budget"]["limit"] == "123.45"
    )
    fresh = call(seeded, BUDGET)
    assert fresh["structuredContent"]["status"] == "awaiting_approval"
    assert fresh["structuredContent"]["action"] != action["id"]


def test_a_declined_write_changes_nothing(seeded: LiveServer) -> None:
    before = budgets(seeded)
    action = call(seeded, BUDGET)["structuredContent"]["action"]
    no = seeded.post(
        f"/api/connector-actions/{action}", json={"approved": False, "reason": "too low"}
    )
    assert no.json()["approval"] == "declined" and no.json()["status"] == "done"
    told = call(seeded, BUDGET)
    assert told["isError"] is True and "They said: too low" in told["content"][0]["text"]
    assert budgets(seeded) == before
    bad = call(seeded, {"amount": "x"})
    assert bad["isError"] is True and "structuredContent" not in bad  # bad input: no action


def test_an_approved_action_runs_its_handler_once(
    seeded: LiveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry = seeded.app.extensions["connector_actions"].registry
    tool = registry.get("set_budget")
    runs: list[dict[str, Any]] = []

    def counted(ctx: Any, data: dict[str, Any]) -> Any:
        runs.append(data)
        return tool.handler(ctx, data)

    monkeypatch.setitem(registry._tools, "set_budget", replace(tool, handler=counted))
    action = call(seeded, BUDGET)["structuredContent"]["action"]
    for _ in range(3):
        assert (
            seeded.post(f"/api/connector-actions/{action}", json={"approved": True}).status_code
            == 200
        )
    seeded.get("/api/connector-actions")
    assert len(runs) == 1


def test_a_modern_app_asks_the_user_through_elicitation(
    seeded: LiveServer, user: tuple[int, str]
) -> None:
    asked: list[str] = []

    def answering(approve: bool | None) -> Any:
        async def elicit(context: Any, params: mt.ElicitRequestParams) -> mt.ElicitResult:
            asked.append(params.message)
            if approve is None:
                return mt.ElicitResult(action="cancel")
            return mt.ElicitResult(action="accept", content={"approve": approve})

        return elicit

    async def run(approve: bool | None, amount: str) -> mt.CallToolResult:
        async with token_client(
            seeded, user[1], MODERN, elicitation_callback=answering(approve)
        ) as c:
            return await c.call_tool("set_budget", {"category": "groceries", "amount": amount})

    no = asyncio.run(run(False, "50"))
    assert no.is_error and "declined" in no.content[0].text
    assert "Set the monthly Groceries budget" in asked[0] or "Groceries" in asked[0]
    dismissed = asyncio.run(run(None, "60"))
    assert not dismissed.is_error and "waits for the user's approval" in dismissed.content[0].text
    yes = asyncio.run(run(True, "70"))
    assert not yes.is_error and json.loads(yes.content[0].text)["budget"]["limit"] == "70.00"
    groceries = [
        b for b in budgets(seeded) if b["category"].lower() == "groceries" and b["month"] is None
    ]
    assert [b["limit"] for b in groceries] == ["70.00"]
    states = {
        a["input"]["amount"]: a["approval"]
        for a in seeded.get("/api/connector-actions").json()["actions"]
    }
    assert states == {"50": "declined", "60": None, "70": "approved"}


def test_a_forged_request_state_is_refused(seeded: LiveServer) -> None:
    params = {
        "name": "set_budget",
        "arguments": BUDGET,
        "requestState": "forged",
        "inputResponses": {},
    }
    reply = post(
        seeded,
        envelope("tools/call", params),
        **{"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "set_budget"},
    )
    assert reply.status_code == 400 and reply.json()["error"]["code"] == mt.INVALID_PARAMS


def test_a_read_only_grant_sees_no_writes_and_a_write_asks_for_the_scope(
    seeded: LiveServer, user: tuple[int, str]
) -> None:
    client = register(seeded)
    grant = tokens_for(seeded, user[1], client["client_id"], scope="read").json()
    assert grant["scope"] == "read"
    token = grant["access_token"]
    listed = httpx2.post(
        f"{seeded.url}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Authorization": f"Bearer {token}"},
    ).json()["result"]["tools"]
    names = [t["name"] for t in listed]
    assert "get_transactions" in names and "set_budget" not in names
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "set_budget", "arguments": BUDGET},
    }
    reply = httpx2.post(
        f"{seeded.url}/mcp", json=body, headers={"Authorization": f"Bearer {token}"}
    )
    assert reply.status_code == 403
    challenge = reply.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge and 'scope="read write"' in challenge
    assert "resource_metadata=" in challenge
