"""Preserved thinking as an API double checks it: each thinking block bound to its prefix.

Anthropic's docs ("Prefix checks on thinking blocks", "Fix a thinking block bound to a
different conversation"): a thinking block sent back to a model with preserved thinking is
checked against what preceded it when it was written: `system`, `tools` and every earlier
message (and the blocks before it in its own message). The check fails if any of that
changed, or a thinking block between others was left out or moved; the request then gets
400 `invalid_request_error`, unless `thinking.block_binding.prefix_mismatch_behavior` is
`"drop_block"` (which needs the `thinking-binding-controls-2026-08-01` beta): then the failing
block and the rest of its turn's consecutive thinking blocks are removed, each reported in
the response's `input_transformations`. A block written by another model is removed
silently (reported only under the beta). Prefixes compare as canonical JSON without
`cache_control` (markers are not content); a request that carries a `compaction` block is
read from it, as the API reads it.

The demo model signs its thinking blocks here and checks every request; the test doubles
(tests/cachesim, tests/upstream) do the same, so any change that rewrites a conversation's
history fails the suite. Pure: no I/O.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "BINDING_BETA",
    "Checked",
    "Refused",
    "bound_message",
    "check",
    "prefix_digest",
    "sign",
    "sign_reply",
    "unmarked",
]

BINDING_BETA = "thinking-binding-controls-2026-08-01"
THINKING = ("thinking", "redacted_thinking")
SCHEME = "pt1."
Message = dict[str, Any]


def bound_message(path: str) -> str:
    """The API's 400 message for a block whose prefix changed, at `path`."""
    return (
        f"{path}: Invalid `signature` in `thinking` block. The block is bound to a different "
        "conversation. Remove the block, or set `thinking.block_binding.prefix_mismatch_behavior`"
        ' to "drop_block".'
    )


class Refused(Exception):
    """The request is refused: 400 `invalid_request_error` with this message."""

    def __init__(self, message: str, status: int = 400, kind: str = "invalid_request_error"):
        super().__init__(message)
        self.message, self.status, self.kind = message, status, kind

    def body(self) -> dict[str, Any]:
        """The API's error body."""
        return {"type": "error", "error": {"type": self.kind, "message": self.message}}


@dataclass
class Checked:
    """What the model reads of a request's messages, and what was removed from them."""

    messages: list[Message]
    transformations: list[dict[str, Any]] = field(default_factory=list)
    # Whether the response may report them (the binding beta was sent).
    reported: bool = False


def unmarked(value: Any) -> Any:
    """`value` without `cache_control`: markers are not content."""
    if isinstance(value, dict):
        return {k: unmarked(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [unmarked(item) for item in value]
    return value


def _canonical(value: Any) -> bytes:
    return json.dumps(
        unmarked(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    ).encode()


def _blocks(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content) if isinstance(content, list) else []


def _head(body: dict[str, Any]) -> bytes:
    system = body.get("system")
    return _canonical(
        {"system": _blocks(system) if system else [], "tools": body.get("tools") or []}
    )


def _start(messages: list[Message]) -> tuple[int, int]:
    """Where the model's reading starts: the newest compaction block, else the beginning."""
    for i in range(len(messages) - 1, -1, -1):
        blocks = _blocks(messages[i].get("content"))
        for j in range(len(blocks) - 1, -1, -1):
            block = blocks[j]
            if isinstance(block, dict) and block.get("type") == "compaction":
                return i, j
    return 0, 0


def prefix_digest(body: dict[str, Any], messages: list[Message], i: int, j: int) -> str:
    """The digest of what precedes block `j` of message `i`: system, tools and messages."""
    first, skip = _start(messages[: i + 1])
    digest = hashlib.sha256(_head(body))
    for k in range(first, i + 1):
        blocks = _blocks(messages[k].get("content"))
        lo = skip if k == first else 0
        hi = j if k == i else len(blocks)
        digest.update(_canonical({"role": messages[k].get("role"), "content": blocks[lo:hi]}))
    return digest.hexdigest()


def _text_digest(block: dict[str, Any]) -> str:
    return hashlib.sha256(str(block.get("thinking", "")).encode()).hexdigest()[:16]


def sign(model: str, prefix: str, block: dict[str, Any]) -> str:
    """A signature binding `block` (its text) to `model` and to its prefix digest."""
    claim = {"m": model, "p": prefix, "t": _text_digest(block)}
    return SCHEME + base64.urlsafe_b64encode(_canonical(claim)).decode()


def _read(signature: Any) -> dict[str, str] | None:
    if not isinstance(signature, str) or not signature.startswith(SCHEME):
        return None
    try:
        claim = json.loads(base64.urlsafe_b64decode(signature[len(SCHEME) :].encode()))
    except ValueError:
        return None
    ok = isinstance(claim, dict) and all(isinstance(claim.get(k), str) for k in "mpt")
    return claim if ok else None


def sign_reply(body: dict[str, Any], blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`blocks` (a reply to `body`) with every thinking block signed over its prefix."""
    messages = list(body.get("messages") or [])
    model = str(body.get("model", ""))
    # A reply continues a trailing assistant message (a pause_turn continuation).
    if messages and messages[-1].get("role") == "assistant":
        before = _blocks(messages[-1].get("content"))
        messages = messages[:-1]
    else:
        before = []
    out: list[dict[str, Any]] = []
    for block in blocks:
        if block.get("type") == "thinking":
            reply: Message = {"role": "assistant", "content": [*before, *out]}
            prefix = prefix_digest(body, [*messages, reply], len(messages), len(before) + len(out))
            block = {**block, "signature": sign(model, prefix, block)}
        out.append(block)
    return out


def _binding(body: dict[str, Any], betas: set[str]) -> str:
    thinking = body.get("thinking")
    binding = thinking.get("block_binding") if isinstance(thinking, dict) else None
    if binding is None:
        return "error"
    if BINDING_BETA not in betas:
        raise Refused(
            "thinking.block_binding: This setting requires the "
            f"`{BINDING_BETA}` value in the `anthropic-beta` header."
        )
    behavior = binding.get("prefix_mismatch_behavior") if isinstance(binding, dict) else None
    if behavior not in (None, "error", "drop_block"):
        raise Refused(
            "thinking.block_binding.prefix_mismatch_behavior: Input should be 'error' or "
            "'drop_block'"
        )
    return str(behavior or "error")


def check(body: dict[str, Any], betas: set[str]) -> Checked:
    """Check every thinking block of the request; raise Refused as the API would.

    A block from another model is removed (`model_binding_mismatch`); one whose prefix changed
    fails the request, or with `drop_block` is removed with the rest of its turn's consecutive
    thinking blocks (`prefix_binding_mismatch`).
    """
    behavior = _binding(body, betas)
    model = str(body.get("model", ""))
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    dropped: dict[tuple[int, int], str] = {}
    for i, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        blocks = _blocks(message.get("content"))
        for j, block in enumerate(blocks):
            if not isinstance(block, dict) or block.get("type") != "thinking":
                continue
            if (i, j) in dropped:
                continue
            path = f"messages.{i}.content.{j}"
            claim = _read(block.get("signature"))
            if claim is None or claim["t"] != _text_digest(block):
                raise Refused(f"{path}: Invalid `signature` in `thinking` block.")
            if claim["m"] != model:
                dropped[(i, j)] = "model_binding_mismatch"
                continue
            if claim["p"] == prefix_digest(body, messages, i, j):
                continue
            if behavior != "drop_block":
                raise Refused(bound_message(path))
            k = j
            while k < len(blocks) and isinstance(blocks[k], dict):
                if blocks[k].get("type") not in THINKING:
                    break
                dropped[(i, k)] = "prefix_binding_mismatch"
                k += 1
    kept = []
    for i, message in enumerate(messages):
        blocks = _blocks(message.get("content"))
        if not any((i, j) in dropped for j in range(len(blocks))):
            kept.append(message)
            continue
        content = [b for j, b in enumerate(blocks) if (i, j) not in dropped]
        if content:
            kept.append({**message, "content": content})
    transformations = [
        {"type": "thinking_dropped", "path": f"messages.{i}.content.{j}", "reason": reason}
        for (i, j), reason in sorted(dropped.items())
    ]
    return Checked(kept, transformations, BINDING_BETA in betas)


def betas_of(headers: Any) -> set[str]:
    """The beta names of a request's `anthropic-beta` header(s)."""
    values = headers.get_list("anthropic-beta") if hasattr(headers, "get_list") else None
    if values is None:
        raw = headers.get("anthropic-beta") if headers is not None else None
        values = [raw] if raw else []
    return {name.strip() for value in values for name in str(value).split(",") if name.strip()}
