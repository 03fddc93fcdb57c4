"""A cited answer through the engine: block_end carries its citations, the stored message keeps
them, and the next request sends the answer back exactly as it came, citations included (an
append-only conversation keeps every search result they number where it was)."""

from __future__ import annotations

from typing import Any

from tests.engine.streams import answer
from tests.helpers import assert_well_formed
from tests.streaming.test_cited_stream import citations_in, cited_events


def test_block_end_and_the_stored_message_keep_citations(run_turn: Any) -> None:
    events = cited_events()
    run = run_turn([events], question="Groceries in August?")
    assert run.status == "completed"
    assert_well_formed(run.events)
    ends = {e["index"]: e.get("citations") for e in run.of("block_end")}
    sent = citations_in(events)
    assert ends == {0: None, 1: sent[1], 2: None, 3: sent[3], 4: None}
    deltas = [e["delta"] for e in run.of("block_delta") if e["delta"]["type"] == "citations_delta"]
    assert [d["citation"] for d in deltas] == sent[1] + sent[3]
    stored = run.store.history(run.session_id)[-1]["content"]
    assert [b.get("citations") for b in stored] == [None, sent[1], None, sent[3], None]


def test_the_next_request_sends_the_answer_back_with_its_citations(run_turn: Any) -> None:
    first = run_turn([cited_events()], question="Groceries in August?")
    second = run_turn([answer("Less.")], question="And July?", session_id=first.session_id)
    assert second.status == "completed"
    (request,) = second.model.requests
    cited = request[1]["content"]
    stored = second.store.history(second.session_id)[1]["content"]
    assert cited == stored, "sent back as the API returned it"
    assert sum("citations" in b for b in cited) == 2
