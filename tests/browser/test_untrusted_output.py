"""Model output is untrusted: markup in it is shown as text and nothing in it ever runs."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

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
    first = _reply(
        [
            {"type": "thinking", "thinking": THINKING, "signature": "sig"},
            {
                "type": "tool_use",
                "id": "toolu_hostile",
                "name": "get_account_balances",
                "input": {},
            },
        ],
        "tool_use",
    )
    second = _reply(
        [{"type": "text", "text": HOSTILE}, {"type": "text", "text": LINKS}], "end_turn"
    )
    upstream.set_chooser(lambda index, body: first if index == 0 else second)
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
    assert shown["status"] == "completed"
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
