"""Per-user MCP credentials: stored encrypted, never returned, sent in that user's headers."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from config import Timings
from models import McpCredential
from models.db import Database
from services.mcp_credentials import CredentialStore, fernet_key
from tests.conftest import make_user
from tests.tools.mcp_fixtures import calls, http_server, running_hub, write_config

SECRET = "s3cret-token-of-alice"


@pytest.fixture
def mcp_app(app_config: dict[str, Any], tmp_path: Path) -> Any:
    from app import create_app

    config = {
        "web": {
            "url": "http://127.0.0.1:9/mcp",
            "headers": {"Authorization": "Bearer {credential}"},
        }
    }
    app = create_app({**app_config, "MCP_CONFIG": write_config(tmp_path / "mcp.json", config)})
    yield app
    app.extensions["engine"].close()
    app.extensions["db"].dispose()


def test_a_credential_is_stored_encrypted_and_never_returned(
    mcp_app: Any, user: tuple[int, str], caplog: pytest.LogCaptureFixture
) -> None:
    client, auth = mcp_app.test_client(), {"Authorization": f"Bearer {user[1]}"}
    put = client.put("/api/mcp/web/credentials", json={"value": SECRET}, headers=auth)
    assert put.status_code == 204 and put.data == b""
    with mcp_app.extensions["db"].read() as s:
        [stored] = s.scalars(select(McpCredential.secret)).all()
    assert SECRET not in stored
    tools = client.get("/api/tools", headers=auth)
    assert tools.status_code == 200 and SECRET not in tools.get_data(as_text=True)
    assert [s["kind"] for s in tools.json["sources"]] == ["built-in", "python", "mcp"]
    assert SECRET not in caplog.text
    assert client.delete("/api/mcp/web/credentials", headers=auth).status_code == 204
    with mcp_app.extensions["db"].read() as s:
        assert s.scalars(select(McpCredential)).all() == []


def test_an_unknown_server_is_404_and_no_token_is_401(mcp_app: Any, user: tuple[int, str]) -> None:
    client, auth = mcp_app.test_client(), {"Authorization": f"Bearer {user[1]}"}
    missing = client.put("/api/mcp/nope/credentials", json={"value": "x"}, headers=auth)
    assert missing.status_code == 404 and missing.json["error"]["code"] == "not_found"
    assert client.put("/api/mcp/web/credentials", json={"value": "x"}).status_code == 401
    empty = client.put("/api/mcp/web/credentials", json={"value": ""}, headers=auth)
    assert empty.status_code == 422


def test_each_user_calls_with_their_own_credential(
    db: Database, user: tuple[int, str], tmp_path: Path
) -> None:
    count_file = tmp_path / "calls.txt"
    bob = make_user(db, "bob")
    store = CredentialStore(db, fernet_key("", "k"))
    store.put(user[0], "web", SECRET)
    with http_server(count_file) as (url, _):
        spec = {"url": url, "headers": {"Authorization": "Bearer {credential}"}}
        config = write_config(tmp_path / "mcp.json", {"web": spec})

        async def main() -> list[Any]:
            async def credential(user_id: int, server: str) -> str | None:
                return await asyncio.to_thread(store.get, user_id, server)

            async with running_hub(config, Timings().scaled(0.05), credential) as hub:
                alice = await hub.call("mcp__web__whoami", {}, user[0])
                nobody = await hub.call("mcp__web__whoami", {}, bob[0])
                await asyncio.wait(hub.close())
                return [alice, nobody]

        alice, nobody = asyncio.run(main())
    assert alice.content == f"Bearer {SECRET}" and not alice.is_error
    assert nobody.is_error and "needs the user's credentials" in nobody.content
    assert calls(count_file) == ["whoami"]


@pytest.mark.parametrize("pasted", [SECRET + "\n", "s3cret\r\nX-Evil: 1", "s3cret\u202etoken"])
def test_a_credential_with_a_control_character_is_422_and_never_logged(
    mcp_app: Any, user: tuple[int, str], caplog: pytest.LogCaptureFixture, pasted: str
) -> None:
    caplog.set_level(logging.DEBUG)
    client, auth = mcp_app.test_client(), {"Authorization": f"Bearer {user[1]}"}
    put = client.put("/api/mcp/web/credentials", json={"value": pasted}, headers=auth)
    assert put.status_code == 422 and put.json["error"]["code"] == "validation_error"
    assert "value" in put.json["error"]["details"]
    assert "s3cret" not in put.get_data(as_text=True)
    assert "s3cret" not in caplog.text
    with mcp_app.extensions["db"].read() as s:
        assert s.scalars(select(McpCredential)).all() == []
