"""The connector on two gunicorn workers (PostgreSQL, Redis): an app connects through a
client ID metadata document, its tokens work on every worker, a write waits for the user's
approval and runs once, and a revocation holds on every worker at once."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.cluster.conftest import Deployment
from tests.cluster.process import Cluster
from tests.connector import App, document_server

pytestmark = pytest.mark.slow
BUDGET = {"category": "groceries", "amount": "321.00"}


def rpc(url: str, token: str, name: str, arguments: dict[str, Any]) -> httpx2.Response:
    """One tools/call on a fresh connection (either worker may answer)."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    with httpx2.Client(timeout=30) as http:
        return http.post(f"{url}/mcp", json=body, headers={"Authorization": f"Bearer {token}"})


def test_an_app_connected_through_one_worker_works_and_ends_on_both(
    deployment: Deployment, tmp_path: Path
) -> None:
    with document_server(tmp_path) as docs:
        env = {**deployment.env, "SSL_CERT_FILE": str(docs.ca), "CIMD_ALLOW_LOOPBACK": "on"}
        url = docs.client_document("/claude.json", "Claude (cluster)")
        cluster = Cluster(env, workers=2, log=deployment.log)
        cluster.start()
        try:
            app = App(f"{cluster.url}/mcp", deployment.token, client_metadata_url=url)

            async def connect() -> list[str]:
                async with app.client() as client:
                    return [t.name for t in (await client.list_tools()).tools]

            assert "get_account_balances" in asyncio.run(connect())
            assert app.storage.tokens is not None
            token = app.storage.tokens.access_token
            for _ in range(6):
                reply = rpc(cluster.url, token, "get_account_balances", {})
                assert reply.status_code == 200
                assert json.loads(reply.json()["result"]["content"][0]["text"])["accounts"]
            # A write: nothing before the user's approval, once after it.
            waiting = rpc(cluster.url, token, "set_budget", BUDGET).json()["result"]
            action = waiting["structuredContent"]["action"]
            page = cluster.client(deployment.token)
            decided = page.post(f"/api/connector-actions/{action}", json={"approved": True})
            assert decided.json()["status"] == "done"
            done = rpc(cluster.url, token, "set_budget", BUDGET).json()["result"]
            assert json.loads(done["content"][0]["text"])["budget"]["limit"] == "321.00"
            [listed] = page.get("/api/connected-apps").json()["apps"]
            assert listed["client_id"] == url
            assert page.delete(f"/api/connected-apps/{listed['id']}").status_code == 204
            # Refused at once, whichever worker answers: every request reads the tokens.
            for _ in range(6):
                assert rpc(cluster.url, token, "get_account_balances", {}).status_code == 401
            page.close()
        finally:
            cluster.stop()
        assert docs.fetches == ["/claude.json"]  # one worker fetched it, the other read it
