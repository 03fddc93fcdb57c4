"""Text no database can store never reaches one, on every route of /openapi.json.

An id in a path that no record can have (NUL, a control character, a lone surrogate, too long)
is 404 `not_found`; a body or query field holding NUL or a lone surrogate, anywhere inside it,
is 422 naming the field; a value the database refuses anyway is 422 `invalid_value`. Never a
5xx, on SQLite and on PostgreSQL, with real ids beside the bad value so a lookup would run.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from models import ApiToken, ChatSession, Message, Turn, UIChat
from models.migrate import upgrade
from tests.backends import fresh_postgres
from tests.conftest import make_user

# As a client sends them: percent-encoded in a path, JSON escapes in a body. No id holds a
# control character (C0, C1) or is longer than 128 characters.
IMPOSSIBLE_IDS = ["%00", "a%00b", "%01", "a%0Ab", "%7F", "%C2%85", "x" * 129]
# Bytes that are no UTF-8 (an encoded surrogate) decode to U+FFFD: a possible id, not found.
UNDECODABLE_IDS = ["%ED%A0%80", "a%ED%A0%80b"]
TEXT_VALUES = {"nul": "a\\u0000b", "surrogate": "a\\ud800b"}
SAMPLE_IDS = {
    "transaction_id": "1",
    "budget_id": "1",
    "account_id": "1",
    "import_id": "1",
    "row_id": "1",
    "rule_id": "1",
    "app_id": "1",
    "action_id": "act_0",
    "series_id": "s0123456789ab",
}


class Backend:
    """An app on one database, with a user who has a session, a finished turn and a chat."""

    def __init__(self, url: str, tmp: Path) -> None:
        from app import create_app

        upgrade(url)
        self.app = create_app(
            {
                "TESTING": True,
                "DATABASE_URL": url,
                "ANTHROPIC_API_KEY": None,
                "SECRET_KEY": "test-secret",
                "EVENT_SPOOL_DIR": str(tmp / "spool"),
            }
        )
        self.db = self.app.extensions["db"]
        _, token = make_user(self.db, "prober")
        self.client = self.app.test_client()
        self.auth = {"Authorization": f"Bearer {token}"}
        session = self.client.post("/api/sessions", headers=self.auth).get_json()["id"]
        turn = self.client.post(
            f"/api/sessions/{session}/turns", json={"message": "hi"}, headers=self.auth
        ).get_json()["turn_id"]
        assert self.app.extensions["turns"].wait(turn)
        chat = {"id": "chat-1", "messages": [user_message("u1", "hello")]}
        streamed = self.client.post("/api/ui/chat", json=chat, headers=self.auth)
        assert streamed.status_code == 200, streamed.get_data(as_text=True)
        streamed.get_data()
        with self.db.read() as s:
            token_id = s.scalar(select(func.max(ApiToken.id)))
        self.ids = {
            "session_id": session,
            "turn_id": turn,
            "chat_id": "chat-1",
            "token_id": str(token_id),
            "server": "web",
            **SAMPLE_IDS,
        }
        self.document = self.client.get("/openapi.json").get_json()

    def rows(self) -> tuple[int, ...]:
        """Rows requests write: sessions, turns, messages, chats."""
        with self.db.read() as s:
            return tuple(
                s.scalar(select(func.count()).select_from(m)) or 0
                for m in (ChatSession, Turn, Message, UIChat)
            )

    def close(self) -> None:
        self.app.extensions["engine"].close()
        self.db.dispose()


def user_message(ui_id: str, text: str) -> dict[str, Any]:
    """A useChat user message."""
    return {"id": ui_id, "role": "user", "parts": [{"type": "text", "text": text}]}


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def backend(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Backend]:
    tmp = tmp_path_factory.mktemp(request.param)
    if request.param == "sqlite":
        made = Backend(f"sqlite:///{tmp / 'probe.db'}", tmp)
        yield made
        made.close()
        return
    with fresh_postgres() as url:
        made = Backend(url, tmp)
        yield made
        made.close()


def operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """Every (method, path template, operation) of the API."""
    return [
        (method.upper(), path, op)
        for path, item in document["paths"].items()
        if path.startswith("/api/")
        for method, op in item.items()
        if method in ("get", "post", "put", "patch", "delete")
    ]


def fill(path: str, ids: dict[str, str], **override: str) -> str:
    """`path` with its parameters replaced by real ids (or the overrides)."""
    for name, value in {**ids, **override}.items():
        path = path.replace("{" + name + "}", value)
    assert "{" not in path, path
    return path


def resolve(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """A schema with its $ref followed."""
    while "$ref" in schema:
        schema = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def holding(document: dict[str, Any], schema: dict[str, Any], text: str) -> str | None:
    """JSON of a value of `schema`'s shape with `text` (a JSON string literal) inside, if any."""
    schema = resolve(document, schema)
    kinds = schema.get("type", "object")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    if "string" in kinds and "enum" not in schema:
        return f'"{text}"'
    if "array" in kinds:
        inner = holding(document, schema.get("items", {"type": "object"}), text)
        return None if inner is None else f"[{inner}]"
    if "object" in kinds and "properties" not in schema:
        return f'{{"k": "{text}", "{text}": 1}}'
    return None


def body_fields(document: dict[str, Any], op: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, a JSON body with `TEXT` inside that field) for each text field of the body."""
    content = op.get("requestBody", {}).get("content", {}).get("application/json")
    if content is None:
        return []
    properties = resolve(document, content["schema"]).get("properties", {})
    found = []
    for name, schema in properties.items():
        if (value := holding(document, schema, "TEXT")) is not None:
            found.append((name, f'{{"{name}": {value}}}'))
    return found


def query_fields(document: dict[str, Any], op: dict[str, Any]) -> list[str]:
    """Names of the string query parameters of `op`."""
    return [
        p["name"]
        for p in op.get("parameters", [])
        if p["in"] == "query" and holding(document, p.get("schema", {}), "TEXT") is not None
    ]


def test_every_route_is_probed(backend: Backend) -> None:
    ops = operations(backend.document)
    with_ids = [op for op in ops if "{" in op[1]]
    # Sessions, turns, AI SDK chats, tokens and records: a new route joins these tests.
    assert len(with_ids) >= 19, with_ids
    assert sum(1 for m, p, op in ops if body_fields(backend.document, op)) >= 8
    assert sum(1 for m, p, op in ops if query_fields(backend.document, op)) >= 3


def test_an_impossible_id_in_any_path_is_404(backend: Backend) -> None:
    before, failures = backend.rows(), []
    for method, path, _ in operations(backend.document):
        for name in [n for n in backend.ids if "{" + n + "}" in path]:
            for value in IMPOSSIBLE_IDS + UNDECODABLE_IDS:
                url = fill(path, backend.ids, **{name: value})
                response = backend.client.open(url, method=method, headers=backend.auth)
                code = (response.get_json() or {}).get("error", {}).get("code")
                if value in UNDECODABLE_IDS:
                    # A possible id: not found, or its (missing) body refused, or nothing to
                    # resume (204); never a 5xx.
                    if response.status_code >= 500:
                        failures.append((method, url, response.status_code, code))
                elif (response.status_code, code) != (404, "not_found"):
                    failures.append((method, url, response.status_code, code))
    assert failures == []
    assert backend.rows() == before


@pytest.mark.parametrize("kind", sorted(TEXT_VALUES))
def test_unstorable_text_in_any_body_field_is_422_naming_it(backend: Backend, kind: str) -> None:
    before, failures, probed = backend.rows(), [], 0
    for method, path, op in operations(backend.document):
        for field, body in body_fields(backend.document, op):
            url = fill(path, backend.ids)
            raw = body.replace("TEXT", TEXT_VALUES[kind]).encode()
            response = backend.client.open(
                url,
                method=method,
                data=raw,
                headers={**backend.auth, "Content-Type": "application/json"},
            )
            error = (response.get_json() or {}).get("error", {})
            probed += 1
            if response.status_code != 422 or field not in error.get("details", {}):
                failures.append((method, url, field, response.status_code, error))
    assert probed and failures == []
    assert backend.rows() == before


def test_a_nul_in_any_query_parameter_is_422_naming_it(backend: Backend) -> None:
    failures, probed = [], 0
    for method, path, op in operations(backend.document):
        for name in query_fields(backend.document, op):
            for value in ("a%00b", "%00"):
                url = f"{fill(path, backend.ids)}?{name}={value}"
                response = backend.client.open(url, method=method, headers=backend.auth)
                error = (response.get_json() or {}).get("error", {})
                probed += 1
                if response.status_code != 422 or name not in error.get("details", {}):
                    failures.append((method, url, response.status_code, error))
            # Percent-encoded surrogates decode to U+FFFD: storable, so any answer but a 5xx.
            url = f"{fill(path, backend.ids)}?{name}=%ED%A0%80"
            assert backend.client.open(url, method=method, headers=backend.auth).status_code < 500
    assert probed and failures == []


def test_ids_inside_ai_sdk_messages_and_approvals_are_checked(backend: Backend) -> None:
    bad = "a\\ud800b"
    bodies = {
        "messageId": {
            "id": "chat-1",
            "trigger": "regenerate-message",
            "messageId": "BAD",
            "messages": [user_message("u1", "hello")],
        },
        "messages": {
            "id": "chat-1",
            "messages": [
                {
                    "id": "a1",
                    "role": "assistant",
                    "parts": [
                        {
                            "type": "tool-set_budget",
                            "state": "approval-responded",
                            "approval": {"id": "BAD", "approved": True},
                        }
                    ],
                }
            ],
        },
    }
    for field, body in bodies.items():
        raw = json.dumps(body).replace("BAD", bad).encode()
        response = backend.client.post(
            "/api/ui/chat", data=raw, headers={**backend.auth, "Content-Type": "application/json"}
        )
        assert response.status_code == 422, response.get_data(as_text=True)
        assert field in response.get_json()["error"]["details"]
    turn = backend.ids["turn_id"]
    response = backend.client.post(
        f"/api/turns/{turn}/approvals",
        data=b'{"tool_use_id": "toolu_\\u0000", "approved": true}',
        headers={**backend.auth, "Content-Type": "application/json"},
    )
    assert response.status_code == 422
    assert "tool_use_id" in response.get_json()["error"]["details"]


@pytest.mark.parametrize("value", ["a\x00b", "a\ud800b"])
def test_a_value_the_database_refuses_is_422_without_a_traceback(
    backend: Backend, value: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # Validation missed it: the database (or its driver) refuses it, the client gets a 4xx.
    def lookup(db: Any, *_: Any) -> dict[str, Any]:
        with db.read() as s:
            s.execute(select(ChatSession.id).where(ChatSession.id == value)).all()
        return {}

    if value == "a\x00b" and backend.db.engine.dialect.name == "sqlite":
        pytest.skip("SQLite stores NUL characters")
    monkeypatch.setattr("routes.chat.sessions.sessions.get_session", lookup)
    with caplog.at_level(logging.WARNING):
        response = backend.client.get(
            f"/api/sessions/{backend.ids['session_id']}", headers=backend.auth
        )
    assert response.status_code == 422, response.get_data(as_text=True)
    assert response.get_json()["error"]["code"] == "invalid_value"
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
