"""schemathesis against the live server with a real token: invalid requests.

Every operation gets requests generated from /openapi.json that the document says are wrong (a
wrong type, a missing field, a value out of range): each response conforms (a wrong request
refused), none is a 5xx, and one answered 4xx writes nothing (`fuzzing.py`).
"""

from __future__ import annotations

import pytest
from schemathesis import GenerationMode

from tests.routes.fuzzing import PARTS, Fuzzed, fuzz_part


@pytest.mark.slow  # hundreds of generated requests each
@pytest.mark.parametrize("part", range(PARTS))
def test_negative_requests_conform_and_never_fail(fuzzed: Fuzzed, part: int) -> None:
    fuzz_part(fuzzed, GenerationMode.NEGATIVE, part)
