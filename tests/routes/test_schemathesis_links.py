"""schemathesis against the live server with a real token: the document's links, walked.

Explicit walks (create session -> start turn -> read events -> cancel -> delete, and the AI
SDK chat), then the state machine schemathesis builds from the links. Every response conforms,
none is a 5xx and one answered 4xx writes nothing (tests/routes/fuzzing.py).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import settings
from hypothesis.errors import FlakyStrategyDefinition
from schemathesis import Case

from tests.live import LiveServer
from tests.routes.fuzzing import SETTINGS, Audit, audited, load

STATEFUL_SCENARIOS = 60
STATEFUL_STEPS = 10
CHAINS = 10  # explicit walks of the links, each ~17 requests


@pytest.fixture
def audit(live: LiveServer, user: tuple[int, str]) -> Iterator[Audit]:
    yield from audited(live, user)


@pytest.mark.slow  # hundreds of requests, some starting turns
def test_links_conform_and_never_fail(live: LiveServer, audit: Audit) -> None:
    schema = load(live)
    for n in range(CHAINS):
        walk_the_links(schema, audit, n)
    stateful = schema.as_state_machine()

    class Machine(stateful):  # type: ignore[misc, valid-type]
        """The links of the document, walked with the token."""

        def call(self, case: Case, **kwargs: Any) -> Any:
            return audit.call(case)

        def validate_response(self, response: Any, case: Case, **kwargs: Any) -> None:
            """Validated in `audit.call`."""

    # The links feed responses back into what is generated next, and some responses depend
    # on timing (a turn still running in one run, finished when Hypothesis replays it):
    # Hypothesis then calls the generation flaky and stops. That is the server's state
    # moving on, not a failure; every check that failed is in the audit, asserted below.
    with contextlib.suppress(FlakyStrategyDefinition):
        Machine.run(
            settings=settings(
                max_examples=STATEFUL_SCENARIOS, stateful_step_count=STATEFUL_STEPS, **SETTINGS
            )
        )
    audit.report(least=STATEFUL_SCENARIOS * 3)


def walk_the_links(schema: Any, audit: Audit, n: int) -> None:
    """create session -> start turn -> read events -> cancel -> delete, each response checked."""

    def call(path: str, method: str, **kw: Any) -> Any:
        return audit.call(schema[path][method].Case(**kw))

    session = call("/api/sessions", "POST", body={"title": f"chain {n}"}).json()
    sid = {"session_id": session["id"]}
    turn = call("/api/sessions/{session_id}/turns", "POST", path_parameters=sid,
                body={"message": f"What did I spend on groceries? ({n})"}).json()  # fmt: skip
    tid = {"turn_id": turn["turn_id"]}
    if n % 2:  # cancel while it runs, then read what it kept
        assert call("/api/turns/{turn_id}/cancel", "POST", path_parameters=tid).status_code == 202
    events = call("/api/turns/{turn_id}/events", "GET", path_parameters=tid)
    assert events.status_code == 200 and b"event: turn_end" in events.content
    last = events.content.rsplit(b"id: ", 1)[1].split(b"\n", 1)[0].decode()
    after = call("/api/turns/{turn_id}/events", "GET", path_parameters=tid,
                 headers={"Last-Event-ID": last})  # fmt: skip
    assert after.status_code == 204
    call("/api/turns/{turn_id}/cancel", "POST", path_parameters=tid)
    assert call("/api/turns/{turn_id}", "GET", path_parameters=tid).status_code == 200
    call("/api/sessions/{session_id}/messages", "GET", path_parameters=sid, query={"limit": 2})
    assert call("/api/sessions/{session_id}", "DELETE", path_parameters=sid).status_code == 204
    assert call("/api/sessions/{session_id}", "GET", path_parameters=sid).status_code == 404
    chat = {"chat_id": f"chain-{n}"}
    body = {"id": chat["chat_id"], "messages": [
        {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Budgets?"}]}]}  # fmt: skip
    assert call("/api/ui/chat", "POST", body=body).status_code == 200
    assert call("/api/ui/chat/{chat_id}/messages", "GET", path_parameters=chat).status_code == 200
    call("/api/ui/chat/{chat_id}/stream", "GET", path_parameters=chat)
    assert call("/api/ui/chat/{chat_id}/cancel", "POST", path_parameters=chat).status_code == 202
