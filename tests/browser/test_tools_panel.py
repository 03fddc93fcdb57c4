"""The tools panel lists each tool source and its tools; an MCP call's approval card."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.keys import Keys

from demo_model.wire import encode_reply
from tests.browser.page import ChatPage
from tests.faults.kinds import Transcript
from tests.faults.upstream import FaultyUpstream
from tests.tools.mcp_fixtures import calls, stdio_spec, write_config

pytestmark = pytest.mark.browser

_PANEL = """
return [...document.querySelectorAll('#tools-panel .tools-source')].map((s) => ({
  kind: s.dataset.kind, name: s.dataset.name, state: s.dataset.state,
  title: s.querySelector('.tools-source-name').firstChild.textContent,
  shownState: s.querySelector('.tools-state')?.textContent ?? null,
  count: s.querySelector('.tools-count').textContent,
  tools: [...s.querySelectorAll('.tools-tool')].map((t) => ({
    name: t.querySelector('.tools-tool-name').textContent,
    mode: t.querySelector('.tools-mode').textContent,
    text: t.querySelector('.tools-tool-text')?.textContent ?? null})),
}));
"""

_CARD = """
const c = document.querySelector('.approval-card');
return c && {state: c.dataset.state, input: c.querySelector('.approval-input')?.textContent ?? null,
  buttons: [...c.querySelectorAll('button')].map((b) => b.textContent)};
"""


def _reply(index: int, blocks: list[dict[str, Any]], stop: str) -> Transcript:
    rng = random.Random(index)
    return Transcript(b"".join(encode_reply(f"msg_{index}", "claude-test", blocks, stop, 10, rng)))


@pytest.fixture
def mcp_app(serve: Any, tmp_path: Path) -> Iterator[Any]:
    """The app with a working MCP server (`lookup` read-only) and one that cannot start,
    against an upstream that calls the server's `transfer` tool, then answers."""
    count_file = tmp_path / "calls.txt"
    config = write_config(
        tmp_path / "mcp.json",
        {
            "counting": stdio_spec(count_file, readOnlyTools=["lookup"]),
            "broken": {"command": str(tmp_path / "missing-program")},
        },
    )
    upstream = FaultyUpstream()
    transfer = {
        "type": "tool_use",
        "id": "toolu_t1",
        "name": "mcp__counting__transfer",
        "input": {"amount": 5, "note": "<b>rent</b>"},
    }

    def choose(index: int, body: dict[str, Any]) -> Transcript:
        if index == 0:
            return _reply(index, [transfer], "tool_use")
        return _reply(index, [{"type": "text", "text": "The transfer ran."}], "end_turn")

    upstream.set_chooser(choose)
    server = serve(ANTHROPIC_API_KEY="sk-test", ANTHROPIC_BASE_URL=upstream.url, MCP_CONFIG=config)
    server.count_file = count_file
    yield server
    upstream.close()


def _open_panel(page: ChatPage) -> list[dict[str, Any]]:
    page.js("document.getElementById('tools-open').click()")
    return page.wait(lambda: page.js(_PANEL), what="the tools panel's sources")


def test_the_panel_lists_each_source_with_its_state_and_tools(mcp_app: Any, page: ChatPage) -> None:
    page.open(f"{mcp_app.url}/#token={mcp_app.headers['Authorization'][7:]}")
    page.wait(
        lambda: any(
            s["name"] == "counting" and s["state"] == "up"
            for s in mcp_app.get("/api/tools").json()["sources"]
        ),
        what="the MCP server to connect",
    )
    listed = mcp_app.get("/api/tools").json()["sources"]
    # A new chat focuses the message box once the page has its chats (late on a busy machine);
    # the panel opens after that, so closing it gives the focus back to its opener.
    page.wait(lambda: page.js("return document.activeElement.id") == "message", what="a new chat")
    shown = _open_panel(page)
    by_kind = {s["kind"]: s for s in shown if s["kind"] != "mcp"}
    builtin = [t["name"] for s in listed if s["kind"] == "built-in" for t in s["tools"]]
    assert [t["name"] for t in by_kind["built-in"]["tools"]] == builtin
    assert {t["mode"] for t in by_kind["built-in"]["tools"]} == {"read-only", "needs approval"}
    mcp = {s["name"]: s for s in shown if s["kind"] == "mcp"}
    counting = mcp["counting"]
    assert (counting["title"], counting["shownState"]) == ("MCP server counting", "connected")
    assert counting["count"] == f"{len(counting['tools'])} tools"
    modes = {t["name"]: t["mode"] for t in counting["tools"]}
    assert modes["lookup"] == "read-only" and modes["transfer"] == "needs approval"
    described = {t["remote"]: t["description"] for s in listed for t in s["tools"] if "remote" in t}
    assert {t["name"]: t["text"] for t in counting["tools"]} == described
    broken = mcp["broken"]
    assert broken["shownState"] in {"down", "connecting"} and broken["tools"] == []
    assert page.js("return document.activeElement.closest('#tools-panel') !== null")
    page.js("document.querySelector('#tools-panel .tools-tool details').open = true")
    for size in ("laptop", "phone"):
        page.size(size)
        for scheme in ("light", "dark"):
            page.color_scheme(scheme)
            page.screenshot(f"tools-panel-{size}-{scheme}")
        assert page.js(
            "const r = document.getElementById('tools-panel').getBoundingClientRect();"
            "return r.left >= 0 && r.right <= innerWidth"
        )
    page.reset()
    page.driver.switch_to.active_element.send_keys(Keys.ESCAPE)
    page.wait(lambda: not page.js("return document.getElementById('tools-panel').open"), what="Esc")
    assert page.js("return document.activeElement.id") == "tools-open"
    assert page.console_errors() == []


def test_an_mcp_call_waits_on_a_card_with_its_raw_input_and_always_in_this_chat(
    mcp_app: Any, page: ChatPage
) -> None:
    page.open(f"{mcp_app.url}/#token={mcp_app.headers['Authorization'][7:]}")
    page.wait(
        lambda: any(
            s["name"] == "counting" and s["state"] == "up"
            for s in mcp_app.get("/api/tools").json()["sources"]
        ),
        what="the MCP server to connect",
    )
    page.ask("Move 5 to savings")
    card = page.wait(
        lambda: (c := page.js(_CARD)) and c["state"] == "pending" and c, what="the approval card"
    )
    assert '"note": "<b>rent</b>"' in card["input"] and '"amount": 5' in card["input"]
    assert page.js("return document.querySelector('.approval-input b')") is None
    assert card["buttons"] == ["Approve", "Always in this chat", "Decline…"]
    assert calls(mcp_app.count_file) == []  # nothing runs before the user says so
    for size in ("laptop", "phone"):
        page.size(size)
        page.screenshot(f"mcp-approval-{size}")
    page.reset()
    page.click(".approval-card .always")
    page.wait(
        lambda: page.js(
            "return [...document.querySelectorAll('.block.text .markdown')]"
            ".some((b) => b.textContent.includes('The transfer ran.'))"
        ),
        what="the answer after the approval",
    )
    assert calls(mcp_app.count_file) == ["transfer"]
    assert page.js(_CARD)["state"] == "approved"
