"""CORS_ORIGINS over HTTP: every method the API uses passes a preflight from a listed origin,
and every API answer, to any origin or none, says it varies by Origin."""

from __future__ import annotations

from typing import Any

import pytest

LISTED, OTHER = "https://app.example", "https://evil.example"


@pytest.fixture
def cors_client(app_config: dict[str, Any]) -> Any:
    from app import create_app

    app = create_app({**app_config, "CORS_ORIGINS": [LISTED]})
    yield app.test_client()
    app.extensions["engine"].close()
    app.extensions["db"].dispose()


@pytest.fixture
def api_methods(cors_client: Any) -> set[str]:
    """Every method some /api route answers, from the OpenAPI document."""
    document = cors_client.get("/openapi.json").get_json()
    return {
        method.upper()
        for path, item in document["paths"].items()
        if path.startswith("/api/")
        for method in item
        if method != "parameters"
    }


def preflight(client: Any, origin: str, method: str) -> Any:
    return client.options(
        "/api/sessions/ses_x",
        headers={
            "Origin": origin,
            "Access-Control-Request-Method": method,
            "Access-Control-Request-Headers": "authorization,content-type",
        },
    )


def test_every_method_the_api_uses_passes_a_preflight(
    cors_client: Any, api_methods: set[str]
) -> None:
    assert {"GET", "POST", "PUT", "PATCH", "DELETE"} <= api_methods
    for method in sorted(api_methods):
        answer = preflight(cors_client, LISTED, method)
        assert answer.status_code == 200
        assert answer.headers["Access-Control-Allow-Origin"] == LISTED
        allowed = answer.headers["Access-Control-Allow-Methods"].split(", ")
        assert method in allowed and "OPTIONS" in allowed, (method, allowed)
        assert "Origin" in answer.vary


def test_a_preflight_from_another_origin_allows_nothing(
    cors_client: Any, api_methods: set[str]
) -> None:
    for method in sorted(api_methods):
        answer = preflight(cors_client, OTHER, method)
        assert "Access-Control-Allow-Origin" not in answer.headers
        assert "Access-Control-Allow-Methods" not in answer.headers
        assert "Origin" in answer.vary


@pytest.mark.parametrize("origin", [LISTED, OTHER, None])
def test_every_api_answer_varies_by_origin(
    cors_client: Any, user: tuple[int, str], origin: str | None
) -> None:
    auth = {"Authorization": f"Bearer {user[1]}"} | ({"Origin": origin} if origin else {})
    session = cors_client.post("/api/sessions", headers=auth)
    answers = [
        session,
        cors_client.get("/api/sessions", headers=auth),
        cors_client.patch(
            f"/api/sessions/{session.get_json()['id']}", json={"title": "t"}, headers=auth
        ),
        cors_client.get("/api/sessions/ses_missing", headers=auth),  # an error
        cors_client.get("/api/sessions", headers={"Origin": origin} if origin else {}),  # 401
    ]
    assert [a.status_code for a in answers] == [201, 200, 200, 404, 401]
    for answer in answers:
        assert "Origin" in answer.vary, answer.headers
        allowed = answer.headers.get("Access-Control-Allow-Origin")
        assert allowed == (LISTED if origin == LISTED else None)
    assert (
        cors_client.get("/", headers={"Origin": LISTED}).headers.get("Access-Control-Allow-Origin")
        is None
    )  # the API only


def test_an_ai_sdk_client_may_resume_at_its_step_cross_origin(cors_client: Any) -> None:
    answer = cors_client.options(
        "/api/ui/chat/chat_x/stream",
        headers={
            "Origin": LISTED,
            "Access-Control-Request-Method": "GET",
            "Access-Control-Request-Headers": "authorization,x-resume-message-id,x-resume-steps",
        },
    )
    allowed = {h.strip().lower() for h in answer.headers["Access-Control-Allow-Headers"].split(",")}
    assert {"x-resume-message-id", "x-resume-steps"} <= allowed
