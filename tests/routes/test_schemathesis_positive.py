"""schemathesis against the live server with a real token: valid requests.

Every operation gets requests generated from /openapi.json as the document says they may be:
each response conforms, none is a 5xx, and one answered 4xx writes nothing (`fuzzing.py`).
"""

from __future__ import annotations

import pytest
from schemathesis import GenerationMode

from tests.routes.fuzzing import PARTS, Fuzzed, fuzz_part


@pytest.mark.slow  # hundreds of generated requests each
@pytest.mark.parametrize("part", range(PARTS))
def test_positive_requests_conform_and_never_fail(fuzzed: Fuzzed, part: int) -> None:
    fuzz_part(fuzzed, GenerationMode.POSITIVE, part)
