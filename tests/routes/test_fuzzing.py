"""The audit the schemathesis modules share (tests/routes/fuzzing.py) still fails what it should:
it runs schemathesis' checks itself, sharing across requests what a schemathesis run shares."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from schemathesis import Response
from schemathesis.core.failures import FailureGroup

from tests.live import LiveServer
from tests.routes.fuzzing import Audit, audited, load


@pytest.fixture
def audit(live: LiveServer, user: tuple[int, str]) -> Iterator[Audit]:
    yield from audited(live, user)


def test_a_response_off_the_document_fails_and_auth_is_probed_once(
    live: LiveServer, user: tuple[int, str], audit: Audit, caplog: pytest.LogCaptureFixture
) -> None:
    def sent() -> list[tuple[Any, int]]:
        """(user, status) of each request the server answered on /api/accounts."""
        lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "chat.access"]
        return [(x["user_id"], x["status"]) for x in lines if x["path"] == "/api/accounts"]

    caplog.set_level("INFO", logger="chat.access")
    operation = load(live)["/api/accounts"]["GET"]
    first = audit.call(operation.Case())
    # The first 2xx of an operation that takes a token: sent again without one, and with a
    # wrong one; both refused.
    assert first.status_code == 200 and audit.enforced == {operation.label}
    assert sent() == [(user[0], 200), (None, 401), (None, 401)]
    audit.call(operation.Case())
    assert len(sent()) == 4  # shown once, as a schemathesis run does
    # The same response with a body the document does not allow fails the checks.
    wrong = Response(
        status_code=200,
        headers=first.headers,
        content=b'{"accounts": "none"}',
        request=first.request,
        elapsed=first.elapsed,
        verify=True,
    )
    with pytest.raises(FailureGroup, match="violates schema"):
        audit.validate(operation.Case(), wrong, [])
    # And a 5xx fails whatever its body.
    broken = Response(
        status_code=500,
        headers=first.headers,
        content=first.content,
        request=first.request,
        elapsed=first.elapsed,
        verify=True,
    )
    with pytest.raises(FailureGroup, match="ServerError"):
        audit.validate(operation.Case(), broken, [])
