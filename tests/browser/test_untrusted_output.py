"""Model output is untrusted: markup in it is shown as text and nothing in it ever runs."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from demo_model.binding import sign_reply
from demo_model.wire import encode_reply
from tests.browser.page import ChatPage
from tests.faults.upstream import FaultyUpstream, Transcript

HOSTILE = (
    'Look: <img src=x onerror="window.pwned=1"> and <script>window.pwned=2</script>, '
    '<iframe src="javascript:window.pwned=3"></iframe> <svg onload="window.pwned=4"></svg> '
    '<a href="javascript:window.pwned=5">a link</a> &lt;b&gt; <style>body{display:none}</style>'
)
LINKS = (
    "A [bad link](javascript:window.__pwned=6), an image ![pic](http://127.0.0.1:9/x.png), "
    "a data link [data](data:text/html;base64,PHNjcmlwdD4K) and a good "
    "one <https://example.invalid/ok>."
)
THINKING = "Thinking with <img src=x onerror=window.__pwned=8> inside."


def _reply(blocks: list[dict[str, Any]], stop: str) -> Transcript:
    events = encode_reply("msg_hostile", "claude-test", blocks, stop, 10, random.Random(7))
    return Transcript(b"".join(events))


@pytest.fixture
def hostile(serve: Any) -> Iterator[Any]:
    """The app against a scripted upstream whose answers carry markup and scripts."""
    upstream = FaultyUpstream()
    first_blocks: list[dict[str, Any]] = [
        {"type": "thinking", "thinking": THINKING, "signature": "sig"},
        {
            "type": "tool_use",
            "id": "toolu_hostile",
            "name": "get_account_balances",
            "input": {},
        },
    ]
    second = _reply(
        [{"type": "text", "text": HOSTILE}, {"type": "text", "text": LINKS}], "end_turn"
    )
    # The upstream double checks thinking signatures as the API does: sign over the request.
    upstream.set_chooser(
        lambda index, body: (
            _reply(sign_reply(body, first_blocks), "tool_use") if index == 0 else second
        )
    )
    yield serve(ANTHROPIC_API_KEY="sk-test", ANTHROPIC_BASE_URL=upstream.url)
    upstream.close()


NOTHING_RAN = """
return {
  pwned: [window.pwned, window.__pwned],
  elements: document.querySelectorAll(
    'img, iframe, svg, object, embed, style, #turns script, link:not([href^="/web/"])').length,
  scripts: [...document.scripts].map((s) => s.getAttribute('src')),
  links: [...document.querySelectorAll('#turns a')].map((a) => [a.textContent, a.href, a.rel]),
  hidden: getComputedStyle(document.body).display,
};
"""


def test_markup_in_answers_is_text_and_never_runs(hostile: Any, page: ChatPage) -> None:
    page.open(f"{hostile.url}/#token={hostile.headers['Authorization'][7:]}")
    page.ask("Show me something nasty")
    shown = page.wait_for_turn_end()
    assert shown["status"] == "completed", shown["footer"]
    page.js("document.querySelectorAll('#turns details').forEach((d) => { d.open = true; })")

    for _ in range(2):  # live, then drawn again from storage after a reload
        # Every character shown, as text (an entity is decoded to its character, as in CommonMark).
        assert shown["texts"][0] == HOSTILE.replace("&lt;b&gt;", "<b>")
        assert shown["texts"][1] == (  # an image is its alt text and its address, not loaded
            "A bad link, an image pic (image: http://127.0.0.1:9/x.png), a data link data and a "
            "good one https://example.invalid/ok."
        )
        assert shown["thinking"][0]["text"] == THINKING
        result = page.js(NOTHING_RAN)
        assert result["pwned"] == [None, None]
        assert result["elements"] == 0
        assert result["scripts"] == ["/web/js/main.js"]
        rel = "noopener noreferrer nofollow"  # only http(s) links; images are never loaded
        assert result["links"] == [
            ["http://127.0.0.1:9/x.png", "http://127.0.0.1:9/x.png", rel],
            ["https://example.invalid/ok", "https://example.invalid/ok", rel],
        ]
        assert result["hidden"] == "flex"
        page.driver.refresh()
        shown = page.wait(lambda: (s := page.shown()) and s["state"] == "ended" and s)
        page.js("document.querySelectorAll('#turns details').forEach((d) => { d.open = true; })")
    page.screenshot("untrusted-output")
    assert page.console_errors() == []


LINK_MERCHANT = "[Verify your card now](https://evil.example/login)"
HEADING_MERCHANT = "Safeway\n# Your account is locked"
RECORDS = """
const turn = [...document.querySelectorAll('#turns .turn')].at(-1);
return {
  links: document.querySelectorAll('#turns a, #sources a').length,
  headings: turn.querySelectorAll('.markdown h1, .markdown h2, .markdown h3, .markdown h4').length,
  images: document.querySelectorAll('#turns img, #sources img').length,
  items: [...turn.querySelectorAll('.markdown li')].map((li) => li.textContent),
  cites: [...turn.querySelectorAll('.cite[role="button"]')].map((s) => s.textContent),
  results: [...turn.querySelectorAll('.tool-result td')].map((td) => td.textContent),
};
"""


@pytest.fixture
def hostile_records(serve: Any, db: Any) -> Any:
    """The demo model over records whose merchants are named like a link and a heading."""
    from sqlalchemy import update

    from models import Transaction

    server = serve()
    with db.transaction() as s:
        for old, new in (("Whole Foods Market", LINK_MERCHANT), ("Trader Joe's", HEADING_MERCHANT)):
            s.execute(update(Transaction).where(Transaction.merchant == old).values(merchant=new))
    return server


def test_record_text_that_looks_like_markdown_is_text_everywhere(
    hostile_records: Any, page: ChatPage
) -> None:
    page.open(f"{hostile_records.url}/#token={hostile_records.headers['Authorization'][7:]}")
    page.ask("What did I spend on groceries last month?")
    assert page.wait_for_turn_end()["status"] == "completed"
    page.js("document.querySelectorAll('#turns details').forEach((d) => { d.open = true; })")
    heading_text = "Safeway # Your account is locked"
    shown = page.js(RECORDS)
    assert shown["links"] == 0 and shown["headings"] == 0 and shown["images"] == 0
    # In the answer, inside the cited figures, and in the tool results' tables, as typed.
    assert any(LINK_MERCHANT in item for item in shown["items"]), shown["items"]
    assert any(heading_text in item for item in shown["items"]), shown["items"]
    cited = next(c for c in shown["cites"] if LINK_MERCHANT in c)
    assert LINK_MERCHANT in shown["results"]
    # The figure's records panel lists the merchant as text too.
    spans = page.driver.find_elements("css selector", '#turns .cite[role="button"]')
    next(s for s in spans if s.text == cited.strip()).click()
    rows = page.wait(
        lambda: page.js(
            "const b = document.getElementById('sources');"
            "return !b.hidden && !b.querySelector('[role=\"status\"]')"
            " && [...b.querySelectorAll('td.merchant')].map((td) => td.textContent);"
        ),
        what="the cited records",
    )
    assert any(LINK_MERCHANT in row for row in rows), rows
    assert page.js(RECORDS)["links"] == 0
    page.screenshot("untrusted-records")
    assert page.console_errors() == []
