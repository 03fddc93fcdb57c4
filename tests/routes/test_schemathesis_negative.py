"""schemathesis against the live server with a real token: invalid requests.

Every operation gets requests generated from /openapi.json that the document says are wrong (a
wrong type, a missing field, a value out of range): each response conforms (a wrong request
refused), none is a 5xx, and one answered 4xx writes nothing (`fuzzing.py`).
"""

from __future__ import annotations

import pytest
from schemathesis import GenerationMode

from tests.routes.fuzzing import Audit, Fuzzed, fuzz

# The operations in parts, a test each, so that the module counts as large and the heavy
# phase (`--dist loadscope`, larger modules first) starts it early, not in its tail.
PARTS = 4


@pytest.mark.slow  # hundreds of generated requests each
@pytest.mark.parametrize("part", range(PARTS))
def test_negative_requests_conform_and_never_fail(fuzzed: Fuzzed, part: int) -> None:
    audit = Audit(fuzzed.live)
    try:
        fuzz(fuzzed.schema, audit, GenerationMode.NEGATIVE, part, PARTS)
        audit.report(least=1000 // PARTS, succeeding=False)
    finally:
        audit.close()
