"""Drive the chat page in Chromium and read back what it shows."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

from tests.waits import wait_until

QUESTION = "What did I spend on groceries last month?"
# The sizes the page is tried at: a laptop's window and a phone's screen (CSS pixels).
SIZES = {"laptop": (1280, 800), "phone": (390, 844)}

# Markdown syntax and whitespace: what rendering may legitimately drop from the model's text.
_MARKUP = re.compile(r"[\s*_`~#>|\-]")

_SHOWN = """
const turn = [...document.querySelectorAll('#turns .turn')].at(-1);
if (!turn) return null;
const text = (node) => node ? node.textContent : null;
return {
  state: turn.dataset.state, status: turn.dataset.status || null, turnId: turn.dataset.turnId,
  user: text(turn.querySelector('.msg.user .bubble')),
  texts: [...turn.querySelectorAll('.block.text .markdown')].map((b) => b.textContent),
  thinking: [...turn.querySelectorAll('details.thinking')].map(
    (d) => ({open: d.open, text: text(d.querySelector('.thinking-text'))})),
  tools: [...turn.querySelectorAll('.block.tool')].map((t) => ({
    name: t.dataset.tool || null, input: text(t.querySelector('.tool-input')),
    state: text(t.querySelector('.tool-state')),
    result: text(t.querySelector('.tool-result pre')),
    resultOpen: t.querySelector('.tool-result')?.open ?? null})),
  footer: text(turn.querySelector('.turn-footer')),
  messages: turn.querySelectorAll('.msg.assistant').length,
};
"""


def visible(text: str) -> str:
    """The characters a reader sees: `text` without whitespace and markdown syntax."""
    return _MARKUP.sub("", text)


class ChatPage:
    """The chat page in a selenium-driven browser."""

    def __init__(self, driver: Any, screenshots: Path) -> None:
        self.driver, self.screenshots = driver, screenshots
        # The browser's own width, before any size is emulated (`reset()` waits for it back).
        self.own_width = int(driver.execute_script("return innerWidth"))

    def js(self, script: str, *args: Any) -> Any:
        return self.driver.execute_script(script, *args)

    def wait(self, check: Callable[[], Any], timeout: float = 20, what: str = "condition") -> Any:
        """Poll `check` until it returns something truthy; fail showing what the page shows."""
        try:
            return wait_until(check, timeout, f"timed out waiting for {what}", every=0.05)
        except AssertionError as failed:
            raise AssertionError(f"{failed}; page shows {self.shown()}") from None

    def open(self, url: str) -> None:
        """Load the page and wait until its script has drawn the chat list or a sign-in."""
        self.driver.get(url)
        self.wait(
            lambda: self.js(
                "return document.querySelector('#sessions li') !== null"
                " || !document.getElementById('token-needed').hidden"
            ),
            what="the page to start",
        )

    def ask(self, question: str) -> None:
        """Type a question and send it."""
        box = self.driver.find_element("id", "message")
        box.clear()
        box.send_keys(question)
        self.driver.find_element("id", "send").click()

    def shown(self) -> dict[str, Any] | None:
        """What the latest turn shows: texts, thinking, tools, state."""
        return self.js(_SHOWN)

    def wait_for_turn_end(self, timeout: float = 30) -> dict[str, Any]:
        return self.wait(
            lambda: (s := self.shown()) and s["state"] == "ended" and s,
            timeout,
            "the turn to end",
        )

    def wait_for_text(self, chars: int, timeout: float = 20) -> dict[str, Any]:
        """Wait until the running turn shows at least `chars` characters of answer text."""
        return self.wait(
            lambda: (
                (s := self.shown())
                and s["state"] == "running"
                and len("".join(s["texts"])) >= chars
                and s
            ),
            timeout,
            f"{chars} characters of answer text",
        )

    def size(self, name: str) -> None:
        """Show the page at one of SIZES (a phone as a touch screen); `reset()` undoes it."""
        width, height = SIZES[name]
        self.driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": name == "phone"},
        )

    def color_scheme(self, scheme: str) -> None:
        """Pretend the system prefers `light` or `dark`."""
        self.driver.execute_cdp_cmd(
            "Emulation.setEmulatedMedia",
            {"features": [{"name": "prefers-color-scheme", "value": scheme}]},
        )

    def reset(self) -> None:
        """Back to the browser's own size and colour scheme (once the page has its width
        back: the renderer learns of it a moment after the command returns, and until then
        a phone's layout, its chat list hidden, is still what a key or a click meets)."""
        self.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        self.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
        self.wait(lambda: self.js("return innerWidth") == self.own_width, what="its own size")

    def click(self, css: str) -> None:
        """Click the first element matching `css`."""
        self.driver.find_element("css selector", css).click()

    def visible(self, css: str) -> bool:
        """Whether the element is shown inside the viewport (not hidden, not off-screen)."""
        return self.js(
            "const e = document.querySelector(arguments[0]);"
            "if (!e || !e.checkVisibility({visibilityProperty: true})) return false;"
            "const r = e.getBoundingClientRect();"
            "return r.width > 0 && r.right > 0 && r.bottom > 0"
            " && r.left < innerWidth && r.top < innerHeight;",
            css,
        )

    def notices(self) -> list[str]:
        """Every notice the latest turn shows: stop reasons, cut-offs, errors, its status."""
        return self.js(
            "const turn = [...document.querySelectorAll('#turns .turn')].at(-1);"
            "return [...turn.querySelectorAll('.notice, .cut-off, .turn-error, .turn-status')]"
            ".map((n) => n.textContent)"
        )

    def confirm_text(self) -> str:
        """Wait for the confirmation dialog and return what it asks."""
        return self.wait(
            lambda: self.js(
                "const d = document.getElementById('confirm');"
                "return d.open && document.getElementById('confirm-text').textContent"
            ),
            what="the confirmation dialog",
        )

    def screenshot(self, name: str) -> Path:
        self.screenshots.mkdir(parents=True, exist_ok=True)
        path = self.screenshots / f"{name}.png"
        self.driver.save_screenshot(str(path))
        return path

    def console_errors(self) -> list[str]:
        """Console errors since the last call (selenium drains the log)."""
        entries = self.driver.get_log("browser")
        return [e["message"] for e in entries if e["level"] == "SEVERE"]


def stored_of(server: Any, turn_id: str) -> dict[str, Any]:
    """The stored texts, thinking, tool calls and results of one turn, read from the API."""
    session_id = server.get(f"/api/turns/{turn_id}").json()["session_id"]
    session = server.get(f"/api/sessions/{session_id}").json()
    texts: list[str] = []
    thinking: list[str] = []
    tools: list[dict[str, Any]] = []
    results: dict[str, Any] = {}
    for message in session["messages"]:
        if message["turn_id"] != turn_id or message["status"] == "discarded":
            continue
        for block in [*message["content"], *(message["partial_content"] or [])]:
            if block["type"] == "text" and message["role"] == "assistant":
                texts.append(block["text"])
            elif block["type"] == "thinking":
                thinking.append(block["thinking"])
            elif block["type"] == "tool_use":
                tools.append(block)
            elif block["type"] == "tool_result":
                results[block["tool_use_id"]] = block
    return {"texts": texts, "thinking": thinking, "tools": tools, "results": results}


def result_json(block: dict[str, Any]) -> Any:
    """A stored tool result's content as the data it carries."""
    content = block["content"]
    if isinstance(content, list):
        content = "\n".join(b.get("text", "") for b in content)
    return json.loads(content)


def assert_renders(shown: dict[str, Any], stored: dict[str, Any]) -> None:
    """The page shows exactly the stored turn: text, thinking, tool calls and results."""
    assert visible("".join(shown["texts"])) == visible("".join(stored["texts"]))
    assert [t["text"] for t in shown["thinking"]] == stored["thinking"]
    assert not any(t["open"] for t in shown["thinking"])  # thinking starts collapsed
    assert [t["name"] for t in shown["tools"]] == [t["name"] for t in stored["tools"]]
    for tool, block in zip(shown["tools"], stored["tools"], strict=True):
        assert json.loads(tool["input"]) == block["input"]
        assert json.loads(tool["result"]) == result_json(stored["results"][block["id"]])
        assert tool["resultOpen"] is False  # results start collapsed
        assert tool["state"] == "done"


def shown_amount(value: str, currency: str) -> str:
    """A tool amount as the page shows it (en-US): "-1850.00" -> minus sign, "1,850.00 USD"."""
    sign, digits = ("\u2212", value[1:]) if value.startswith("-") else ("", value)
    whole, _, cents = digits.partition(".")
    return f"{sign}{int(whole):,}{'.' + cents if cents else ''} {currency}"


def shown_decimal(text: str) -> Decimal:
    """The number of an amount the page shows: "\u22121,850.00 USD" -> Decimal("-1850.00")."""
    return Decimal(text.split()[0].replace("\u2212", "-").replace(",", ""))
