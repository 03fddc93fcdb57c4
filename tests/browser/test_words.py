"""Errors, stop reasons and sign-in problems are shown in words a person can act on."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from demo_model.wire import encode_reply
from tests.browser.page import ChatPage
from tests.faults.upstream import FaultyUpstream, Status, Transcript


@pytest.fixture
def upstream() -> Iterator[FaultyUpstream]:
    """A scripted model API on loopback."""
    server = FaultyUpstream()
    yield server
    server.close()


def test_a_cut_off_answer_and_a_failed_one_are_explained(
    serve: Any, upstream: FaultyUpstream, page: ChatPage
) -> None:
    text = "This answer runs on and on until the model hits its length limit"
    blocks = [{"type": "text", "text": text}]
    events = encode_reply("msg_long", "claude-test", blocks, "max_tokens", 9, random.Random(1))
    upstream.script(Transcript(b"".join(events)), Status(529), Status(529))
    server = serve(
        ANTHROPIC_API_KEY="sk-test",
        ANTHROPIC_BASE_URL=upstream.url,
        UPSTREAM_MAX_RETRIES=1,
        UPSTREAM_BACKOFF_BASE=0.01,
    )
    page.open(f"{server.url}/#token={server.headers['Authorization'][7:]}")

    page.ask("Tell me everything")
    shown = page.wait_for_turn_end()
    assert shown["texts"] == [text]
    said = page.notices()  # one notice for one cause: not the stop reason and its error both
    assert said == [
        "The answer hit the length limit and was cut off."
        "The reply was cut off at the output token limit; ask for a shorter answer."
    ]

    page.ask("Try again")
    shown = page.wait_for_turn_end()
    assert shown["status"] == "failed"
    assert page.notices() == [shown["footer"]]  # the error says it failed, and why, once
    assert shown["footer"].startswith("The model is overloaded right now. Try again in a moment.")
    assert page.js("return document.getElementById('send').disabled") is False


def test_the_token_field_signs_in(serve: Any, page: ChatPage) -> None:
    server = serve()
    page.open(server.url)  # no token in the address or in storage
    assert page.js("return document.getElementById('token-needed').hidden") is False

    page.driver.find_element("id", "token").send_keys("cbt_not_a_real_token")
    page.driver.find_element("css selector", "#token-form button").click()
    page.wait(
        lambda: (
            page.js("return document.getElementById('notice').textContent")
            == "The API token is not valid. Paste the token that make run printed."
        ),
        what="the invalid-token notice",
    )
    # The notice's Markdown is rendered: the command is code, not text in backticks.
    assert page.js("return document.querySelector('#notice code').textContent") == "make run"
    page.driver.find_element("id", "token").send_keys(server.headers["Authorization"][7:])
    page.driver.find_element("css selector", "#token-form button").click()
    page.wait(
        lambda: page.js("return !document.getElementById('empty').hidden"),
        what="the signed-in empty chat",
    )
    assert page.js("return document.getElementById('notice').hidden") is True
    assert page.js("return document.getElementById('token-needed').hidden") is True
    page.ask("What are my account balances?")
    assert page.wait_for_turn_end()["status"] == "completed"


def test_the_page_is_served_with_a_strict_policy(serve: Any) -> None:
    server = serve()
    page = server.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "default-src 'none'" in policy
    assert "unsafe" not in policy and "require-trusted-types-for 'script'" in policy
    assert page.headers["x-content-type-options"] == "nosniff"
    script = server.get("/web/js/main.js")
    assert script.headers["content-type"].startswith("text/javascript")
    assert server.get("/web/nothing.js").status_code == 404
