"""An Anthropic API double that enforces what the docs say of the models of today (issue 36).

Served over real sockets (tests/faults' server), so the app reaches it through
ANTHROPIC_BASE_URL with the real `anthropic` client. What it refuses, each with a 400
`invalid_request_error` as the API words it (Anthropic's docs; decision 0011 keeps the shapes):

- a thinking block whose prefix changed, or one between others left out or moved (the check
  of demo_model/binding.py, run by the server before any reply); with
  `thinking.block_binding.prefix_mismatch_behavior: "drop_block"` (and its beta) the block is
  dropped instead and reported in `input_transformations`; a block from another model is
  dropped silently;
- `thinking.type` `disabled` or `enabled` (`budget_tokens`) on these models, a type the model
  does not take, `between_tools` above effort `high`, a `display` the model lacks, `updates`
  or `block_binding` without their betas;
- a forced `tool_choice` (`any` or `tool`);
- a `role: "system"` message first, with blocks other than text and tool changes, or between a
  tool call and its result; a tool change without its beta (`mid-conversation-tool-changes-
  2026-07-01` by reference, `inline-tools-2026-09-15` by value), or naming a tool not offered.

It answers like the demo model (demo_model/brain.py): finance tool rounds with a progress note
before each, then a cited answer; its thinking blocks are signed over the request as sent.
Independent of the app's own model table: these rules come from the docs, not from our code.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from demo_model.binding import check, sign_reply
from demo_model.brain import respond
from demo_model.wire import encode_reply
from tests.faults.kinds import Fault, Status, Transcript
from tests.faults.upstream import FaultyUpstream

UPDATES_BETA = "thinking-display-updates-2026-08-18"
BINDING_BETA = "thinking-binding-controls-2026-08-01"
BY_REFERENCE_BETA = "mid-conversation-tool-changes-2026-07-01"
INLINE_BETA = "inline-tools-2026-09-15"
LOW = frozenset({"low", "medium", "high"})


@dataclass(frozen=True)
class Documented:
    """What the docs say one model takes."""

    thinking: frozenset[str]
    displays: frozenset[str]


DOCUMENTED = {
    # "What's new in Claude Sonnet 5.5": between_tools instead of disabled (at low to high).
    "claude-sonnet-5-5": Documented(
        frozenset({"adaptive", "between_tools"}), frozenset({"summarized", "omitted", "updates"})
    ),
    # "What's new in Claude Opus 5.5": thinking can't be disabled.
    "claude-opus-5-5": Documented(
        frozenset({"adaptive"}), frozenset({"summarized", "omitted", "updates"})
    ),
    # The Haiku 5.5 overview: adaptive thinking; `updates` is not among its displays.
    "claude-haiku-5-5": Documented(frozenset({"adaptive"}), frozenset({"summarized", "omitted"})),
}


def refusal(body: dict[str, Any], betas: set[str]) -> str | None:
    """The 400 message the API would answer `body` with (None: accepted)."""
    model = DOCUMENTED.get(str(body.get("model")))
    if model is None:
        return f"model: {body.get('model')!r} is not a model of today"
    return _thinking(body, model, betas) or _tool_choice(body) or _system_messages(body, betas)


def _thinking(body: dict[str, Any], model: Documented, betas: set[str]) -> str | None:
    thinking = body.get("thinking")
    if thinking is None:
        return None
    kind = thinking.get("type")
    if kind in ("disabled", "enabled") or "budget_tokens" in thinking:
        return (
            f'"thinking.type.{kind}" is not supported for this model. Use '
            '"thinking.type.adaptive" and "output_config.effort" to control thinking behavior.'
        )
    if kind not in model.thinking:
        return f"thinking.type: {kind!r} is not supported for this model"
    effort = (body.get("output_config") or {}).get("effort")
    if kind == "between_tools" and effort is not None and effort not in LOW:
        return f"thinking.type: between_tools is not supported at effort {effort!r}"
    display = thinking.get("display")
    if display is not None and (kind != "adaptive" or display not in model.displays):
        return f"thinking.display: {display!r} is not supported for this model"
    if display == "updates" and UPDATES_BETA not in betas:
        return f"thinking.display: 'updates' requires the `{UPDATES_BETA}` beta header"
    return None


def _tool_choice(body: dict[str, Any]) -> str | None:
    choice = body.get("tool_choice") or {}
    if choice.get("type") in ("any", "tool"):
        return "tool_choice: forced tool use is not supported for this model"
    return None


def _system_messages(body: dict[str, Any], betas: set[str]) -> str | None:
    offered = {str(t.get("name")) for t in body.get("tools") or []}
    expected: set[str] = set()
    for i, message in enumerate(body.get("messages") or []):
        role, content = message.get("role"), message.get("content")
        if role == "assistant":
            blocks = content if isinstance(content, list) else []
            expected = {str(b.get("id")) for b in blocks if b.get("type") == "tool_use"}
            continue
        if role != "system":
            expected = set()
            continue
        if i == 0:
            return "messages.0: the first message must use the `user` role"
        if expected:
            return f"messages.{i}: a system message cannot follow tool_use blocks"
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for j, block in enumerate(blocks or []):
            problem = _system_block(block, offered, betas)
            if problem:
                return f"messages.{i}.content.{j}: {problem}"
    return None


def _system_block(block: dict[str, Any], offered: set[str], betas: set[str]) -> str | None:
    kind = block.get("type")
    if kind == "text":
        return (
            None if str(block.get("text", "")).strip() else "text content blocks must be non-empty"
        )
    if kind not in ("tool_addition", "tool_removal"):
        return f"a system message cannot hold a {kind} block"
    tool = block.get("tool") or {}
    if tool.get("type") == "tool_definition":
        if kind != "tool_addition" or INLINE_BETA not in betas:
            return f"tool_definition requires the `{INLINE_BETA}` beta header"
        name = str((tool.get("definition") or {}).get("name"))
        offered.add(name)
        return None
    if tool.get("type") != "tool_reference":
        return f"tool: unknown type {tool.get('type')!r}"
    if not betas & {BY_REFERENCE_BETA, INLINE_BETA}:
        return f"{kind} requires the `{BY_REFERENCE_BETA}` beta header"
    name = str(tool.get("name"))
    if name not in offered:
        return f"tool {name!r} is not declared in `tools` or added earlier"
    if kind == "tool_removal":
        offered.discard(name)
    return None


class ApiDouble:
    """The double, serving until closed; what it was asked and what it refused are kept."""

    def __init__(self) -> None:
        self.server = FaultyUpstream()
        self.server.set_chooser(self._serve)
        self.url = self.server.url
        # Faults to serve by request index (a cut stream, a stall), else the reply.
        self.faults: dict[int, Fault] = {}
        # Seconds between a reply's events (so a message can arrive while a turn runs).
        self.delay = 0.0
        self.transformations: list[list[dict[str, Any]]] = []
        self._refusals: list[str] = []

    def __enter__(self) -> ApiDouble:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.server.close()

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every request body, refused ones included, in order."""
        return self.server.requests

    @property
    def betas(self) -> list[set[str]]:
        """Each request's beta headers."""
        return self.server.betas

    def refused(self) -> list[str]:
        """Every 400 the double answered: the binding check's and the docs' rules'."""
        return [*self.server.refusals, *self._refusals]

    def _serve(self, index: int, body: dict[str, Any]) -> Fault:
        problem = refusal(body, self.server.betas[index])
        if problem is not None:
            self._refusals.append(problem)
            return Status(400, error_type="invalid_request_error", message=problem)
        fault = self.faults.get(index)
        if fault is not None:
            return fault
        # The server refused a changed prefix before this; what is left are the drops.
        checked = check(body, self.server.betas[index])
        reply = respond({**body, "messages": checked.messages})
        blocks = sign_reply(body, reply.blocks)
        reported = checked.transformations if checked.reported else None
        self.transformations.append(checked.transformations)
        seed = hashlib.sha256(repr(index).encode()).digest()
        events = encode_reply(
            f"msg_double_{index:04d}",
            str(body.get("model")),
            blocks,
            reply.stop_reason,
            max(1, len(repr(body)) // 4),
            random.Random(seed),
            input_transformations=reported,
        )
        return Transcript(b"".join(events), delay=self.delay)
