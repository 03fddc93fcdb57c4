"""schemathesis against the live server with a real token: invalid requests.

Every operation gets requests generated from /openapi.json that the document says are wrong (a
wrong type, a missing field, a value out of range): each response conforms (a wrong request
refused), none is a 5xx, and one answered 4xx writes nothing (`fuzzing.py`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from schemathesis import GenerationMode

from tests.live import LiveServer
from tests.routes.fuzzing import Audit, fuzz, load, serving

# The operations in parts, a test each, so that the module counts as large and the heavy
# phase (`--dist loadscope`, larger modules first) starts it early, not in its tail.
PARTS = 4


@pytest.fixture(scope="module")
def live(migrated_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with serving(migrated_template, tmp_path_factory.mktemp("fuzz")) as server:
        yield server


@pytest.fixture(scope="module")
def schema(live: LiveServer) -> Any:
    return load(live)


@pytest.mark.slow  # hundreds of generated requests each
@pytest.mark.parametrize("part", range(PARTS))
def test_negative_requests_conform_and_never_fail(live: LiveServer, schema: Any, part: int) -> None:
    audit = Audit(live)
    try:
        fuzz(schema, audit, GenerationMode.NEGATIVE, part, PARTS)
        audit.report(least=1000 // PARTS, succeeding=False)
    finally:
        audit.close()
