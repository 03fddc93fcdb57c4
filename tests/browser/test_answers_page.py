"""Answers people would rather look at: tool use folded, amounts as the answers write them."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.page import SIZES, ChatPage

EARNED = "How much did I earn last month?"

# Where the answer's first line of text sits once its question is scrolled to the top.
ANSWER_TOP = """
const turn = [...document.querySelectorAll('#turns .turn')].at(-1);
const conversation = document.getElementById('conversation');
turn.querySelector('.msg.user').scrollIntoView({block: 'start'});
const texts = [...turn.querySelectorAll('.block.text .markdown')]
  .filter((t) => t.textContent.trim());
const answer = texts.at(-1).getBoundingClientRect();
return {
  answerTop: answer.top, bottom: conversation.getBoundingClientRect().bottom,
  folds: turn.querySelectorAll('.tool-fold').length,
  open: turn.querySelector('.tool-fold').open,
  line: turn.querySelector('.tool-fold summary').textContent,
  calls: turn.querySelectorAll('.tool-fold .block.tool').length,
  overflowX: document.documentElement.scrollWidth - innerWidth,
};
"""


def sign_in(page: ChatPage, server: Any) -> None:
    page.open(f"{server.url}/#token={server.headers['Authorization'][7:]}")


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("size", ["laptop", "phone"])
def test_tool_calls_fold_into_one_line_and_the_answer_starts_on_the_first_screen(
    serve: Any, page: ChatPage, size: str, scheme: str
) -> None:
    server = serve()
    page.size(size)
    page.color_scheme(scheme)
    sign_in(page, server)
    page.ask(EARNED)
    shown = page.wait_for_turn_end()
    assert len(shown["tools"]) >= 2  # several calls, all in one fold
    at = page.js(ANSWER_TOP)
    assert at["folds"] == 1 and at["calls"] == len(shown["tools"]) and at["open"] is False
    assert at["line"].startswith("Looked up ") and "get_" not in at["line"]
    assert at["answerTop"] < at["bottom"]  # the answer starts within the first screen
    assert at["overflowX"] <= 0
    page.screenshot(f"answers-folded-{size}-{scheme}")
    page.click("#turns .tool-fold summary")  # opens on demand, to the calls in words
    titles = page.js(
        "return [...document.querySelectorAll('#turns .tool-fold .tool-title')]"
        ".map((t) => t.textContent)"
    )
    assert titles and all("_" not in t for t in titles)
    assert not page.visible("#turns .tool-fold .tool-input")  # the raw JSON waits behind a click
    page.screenshot(f"answers-unfolded-{size}-{scheme}")
    assert (page.js("return innerWidth"), page.js("return innerHeight")) == SIZES[size]
