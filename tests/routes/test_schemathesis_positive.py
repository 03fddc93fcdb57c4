"""schemathesis against the live server with a real token: valid requests.

Every operation gets requests generated from /openapi.json as the document says they may be:
each response conforms, none is a 5xx, and one answered 4xx writes nothing (`fuzzing.py`).
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
def test_positive_requests_conform_and_never_fail(fuzzed: Fuzzed, part: int) -> None:
    audit = Audit(fuzzed.live)
    try:
        fuzz(fuzzed.schema, audit, GenerationMode.POSITIVE, part, PARTS)
        audit.report(least=1000 // PARTS)
    finally:
        audit.close()
