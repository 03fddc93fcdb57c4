"""schemathesis against the live server with a real token: valid requests.

Every operation gets requests generated from /openapi.json as the document says they may be:
each response conforms, none is a 5xx, and one answered 4xx writes nothing (`fuzzing.py`).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from schemathesis import GenerationMode

from tests.live import LiveServer
from tests.routes.fuzzing import Audit, audited, fuzz


@pytest.fixture
def audit(live: LiveServer, user: tuple[int, str]) -> Iterator[Audit]:
    yield from audited(live, user)


@pytest.mark.slow  # thousands of generated requests
def test_positive_requests_conform_and_never_fail(live: LiveServer, audit: Audit) -> None:
    fuzz(live, audit, GenerationMode.POSITIVE)
    audit.report(least=1000)
