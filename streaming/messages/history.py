"""Validation and repair of a Messages API `messages` history."""

from __future__ import annotations

from typing import Any, TypeGuard

__all__ = ["INTERRUPTED_RESULT", "repair_history", "validate_history"]

INTERRUPTED_RESULT = "interrupted: the tool did not run to completion"

Block = dict[str, Any]


def _nonempty_str(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and bool(value)


def _check_block(
    where: str, role: Any, block: Any, first_use: dict[str, int], index: int, problems: list[str]
) -> None:
    if not isinstance(block, dict) or not isinstance(block.get("type"), str):
        problems.append(f"{where}: block is not an object with a string 'type'")
        return
    kind = block["type"]
    if kind in ("thinking", "redacted_thinking", "tool_use") and role != "assistant":
        problems.append(f"{where}: {kind} block is only allowed in assistant messages")
    elif kind == "tool_result" and role != "user":
        problems.append(f"{where}: tool_result block is only allowed in user messages")
    if kind == "text":
        text = block.get("text")
        if not isinstance(text, str) or not text.strip():
            problems.append(f"{where}: text block is empty or whitespace-only")
    elif kind == "thinking":
        if not _nonempty_str(block.get("signature")):
            problems.append(f"{where}: thinking block is missing its signature")
        if not isinstance(block.get("thinking"), str):
            problems.append(f"{where}: thinking block has no 'thinking' string")
    elif kind == "redacted_thinking":
        if not _nonempty_str(block.get("data")):
            problems.append(f"{where}: redacted_thinking block is missing its data")
    elif kind == "tool_use":
        tool_id = block.get("id")
        if not _nonempty_str(tool_id):
            problems.append(f"{where}: tool_use block has no id")
        elif tool_id in first_use:
            first = first_use[tool_id]
            problems.append(f"{where}: duplicate tool_use id {tool_id} (also messages[{first}])")
        else:
            first_use[tool_id] = index
        if not _nonempty_str(block.get("name")):
            problems.append(f"{where}: tool_use block has no name")
        if not isinstance(block.get("input"), dict):
            problems.append(f"{where}: tool_use {tool_id} input must be an object (dict)")
    elif kind == "tool_result" and not _nonempty_str(block.get("tool_use_id")):
        problems.append(f"{where}: tool_result block has no tool_use_id")


def _check_results(where: str, blocks: list[Any], expected: list[str], problems: list[str]) -> None:
    seen: set[str] = set()
    other_seen = False
    for j, block in enumerate(blocks):
        if not isinstance(block, dict) or block.get("type") != "tool_result":
            other_seen = True
            continue
        tool_id = block.get("tool_use_id")
        if other_seen:
            problems.append(f"{where}.content[{j}]: tool_result must come before other blocks")
        if not isinstance(tool_id, str):
            continue
        if tool_id not in expected:
            problems.append(
                f"{where}.content[{j}]: tool_result for {tool_id} does not match any tool_use "
                "in the preceding assistant message"
            )
        elif tool_id in seen:
            problems.append(f"{where}.content[{j}]: more than one tool_result for {tool_id}")
        seen.add(tool_id)
    for tool_id in expected:
        if tool_id not in seen:
            problems.append(
                f"{where}: orphan tool_use {tool_id}: no tool_result for it in this message, "
                "which must answer the preceding assistant message"
            )


def validate_history(messages: list[dict[str, Any]], expect_user_last: bool = True) -> list[str]:
    """Return the problems the Messages API would reject in `messages`; [] if acceptable."""
    if not isinstance(messages, list) or not messages:
        return ["history is empty: at least one message is required"]
    problems: list[str] = []
    first_use: dict[str, int] = {}
    prev_role: Any = None
    expected: list[str] = []  # tool_use ids of the previous assistant message
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(message, dict):
            problems.append(f"{where}: message is not an object")
            prev_role, expected = None, []
            continue
        role = message.get("role")
        content = message.get("content")
        if role == "system":
            # A mid-conversation system message: notes, in no turn of the alternation.
            _check_system(where, i, content, expected, problems)
            continue
        if role not in ("user", "assistant"):
            problems.append(f"{where}: role must be 'user' or 'assistant', got {role!r}")
        elif i == 0 and role != "user":
            problems.append(f"{where}: first message must have role 'user', got {role!r}")
        elif role == prev_role:
            problems.append(f"{where}: roles must alternate; two {role!r} messages are adjacent")
        blocks: list[Any] = []
        if isinstance(content, str):
            if not content.strip():
                problems.append(f"{where}: content is empty or whitespace-only")
        elif isinstance(content, list):
            if not content:
                problems.append(f"{where}: content is an empty list")
            blocks = content
            for j, block in enumerate(blocks):
                _check_block(f"{where}.content[{j}]", role, block, first_use, i, problems)
        else:
            problems.append(f"{where}: content must be a string or a list of blocks")
        if role == "user":
            _check_results(where, blocks, expected, problems)
        elif expected:
            orphans = ", ".join(expected)
            problems.append(f"{where}: orphan tool_use {orphans}: no user tool_result follows")
        expected = _tool_use_ids(blocks) if role == "assistant" else []
        prev_role = role
    # Notes after the last message leave it the last one of the alternation.
    turns = [m for m in messages if not (isinstance(m, dict) and m.get("role") == "system")]
    last_role = turns[-1].get("role") if turns and isinstance(turns[-1], dict) else None
    if expected and expect_user_last:
        problems.append(
            f"messages[{len(messages) - 1}]: orphan tool_use {', '.join(expected)}: "
            "the history ends before its tool_result"
        )
    if expect_user_last and last_role != "user":
        problems.append(f"messages[{len(messages) - 1}]: the last message must have role 'user'")
    return problems


SYSTEM_BLOCKS = ("text", "tool_addition", "tool_removal")


def _check_system(
    where: str, index: int, content: Any, expected: list[str], problems: list[str]
) -> None:
    """A `role: "system"` message: after the first message, never between a tool call and
    its results, holding text and tool changes only."""
    if index == 0:
        problems.append(f"{where}: the first message must have role 'user', got 'system'")
    if expected:
        problems.append(f"{where}: a system message cannot come between tool_use and its result")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    if not isinstance(blocks, list) or not blocks:
        problems.append(f"{where}: a system message needs content")
        return
    for j, block in enumerate(blocks):
        kind = block.get("type") if isinstance(block, dict) else None
        if kind not in SYSTEM_BLOCKS:
            problems.append(f"{where}.content[{j}]: a system message holds no {kind} block")
        elif kind == "text" and not str(block.get("text", "")).strip():
            problems.append(f"{where}.content[{j}]: text block is empty or whitespace-only")


def _tool_use_ids(blocks: list[Any]) -> list[str]:
    return [
        block["id"]
        for block in blocks
        if isinstance(block, dict)
        and block.get("type") == "tool_use"
        and _nonempty_str(block.get("id"))
    ]


def _interrupted(tool_id: str) -> Block:
    return {
        "type": "tool_result",
        "tool_use_id": tool_id,
        "is_error": True,
        "content": INTERRUPTED_RESULT,
    }


def _clean_blocks(role: str, content: Any, used_ids: set[str], from_str: set[int]) -> list[Block]:
    if isinstance(content, str):
        if not content.strip():
            return []
        block = {"type": "text", "text": content}
        from_str.add(id(block))
        return [block]
    if not isinstance(content, list):
        return []
    kept: list[Block] = []
    for block in content:
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            continue
        kind = block["type"]
        if kind == "text":
            text = block.get("text")
            if isinstance(text, str) and text.strip():
                kept.append(block)
        elif kind == "thinking":
            signed = _nonempty_str(block.get("signature"))
            if role == "assistant" and signed and isinstance(block.get("thinking"), str):
                kept.append(block)
        elif kind == "redacted_thinking":
            if role == "assistant" and _nonempty_str(block.get("data")):
                kept.append(block)
        elif kind == "tool_use":
            tool_id = block.get("id")
            if role != "assistant" or not _nonempty_str(tool_id) or tool_id in used_ids:
                continue
            if not _nonempty_str(block.get("name")):
                continue
            used_ids.add(tool_id)
            kept.append(block if isinstance(block.get("input"), dict) else {**block, "input": {}})
        elif kind == "tool_result":
            if role == "user" and _nonempty_str(block.get("tool_use_id")):
                kept.append(block)
        else:
            kept.append(block)
    return kept


def _pair_results(blocks: list[Block], expected: list[str]) -> list[Block]:
    """Keep one result per expected tool_use, synthesise missing ones, put results first."""
    wanted = set(expected)
    results: dict[str, Block] = {}
    others: list[Block] = []
    for block in blocks:
        if block["type"] != "tool_result":
            others.append(block)
        elif block["tool_use_id"] in wanted and block["tool_use_id"] not in results:
            results[block["tool_use_id"]] = block
    missing = [_interrupted(tool_id) for tool_id in expected if tool_id not in results]
    return [*missing, *results.values(), *others]


def repair_history(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return a new history the API accepts (ending may be assistant); the input is not mutated.

    A message's `id` (where it is stored) is kept; one merged from several keeps the first,
    except that tool results merged with a later question take the question's id. An
    assistant message's `preamble` (the system messages sent before it) goes with it.
    """
    cleaned: list[list[Any]] = []  # [role, blocks, id, preamble]
    used_ids: set[str] = set()
    # Text blocks made from string content; a message left as just that block gets its string back.
    from_str: set[int] = set()
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            continue
        role = message["role"]
        blocks = _clean_blocks(role, message.get("content"), used_ids, from_str)
        if not blocks:
            continue
        preamble = message.get("preamble") if role == "assistant" else None
        if cleaned and cleaned[-1][0] == role:
            if _asks(blocks) and not _asks(cleaned[-1][1]):
                cleaned[-1][2] = message.get("id")
            cleaned[-1][1].extend(blocks)
            cleaned[-1][3] = cleaned[-1][3] or preamble
        else:
            cleaned.append([role, blocks, message.get("id"), preamble])

    out: list[tuple[str, list[Block], Any, Any]] = []
    for role, blocks, ident, preamble in cleaned:
        if role == "assistant":
            # A history cannot open with the assistant; dropping it also orphans its tool
            # results, which the next user message then discards.
            if not out:
                continue
            if out[-1][0] == "assistant":
                out[-1][1].extend(blocks)
            else:
                out.append((role, blocks, ident, preamble))
            continue
        # `cleaned` alternates and assistants are only skipped while `out` is empty, so a
        # user message here always follows an assistant message or opens the history.
        expected = _tool_use_ids(out[-1][1]) if out else []
        blocks = _pair_results(blocks, expected)
        # Dropping a user message that held only unmatched results can make two assistant
        # messages adjacent; the next assistant then merges into this one above.
        if blocks:
            out.append((role, blocks, ident, None))
    if out and out[-1][0] == "assistant":
        pending = _tool_use_ids(out[-1][1])
        if pending:
            out.append(("user", [_interrupted(tool_id) for tool_id in pending], None, None))
    return [_message(role, blocks, ident, from_str, pre) for role, blocks, ident, pre in out]


def _asks(blocks: list[Block]) -> bool:
    return any(block["type"] != "tool_result" for block in blocks)


def _message(
    role: str, blocks: list[Block], ident: Any, from_str: set[int], preamble: Any
) -> dict[str, Any]:
    single = len(blocks) == 1 and id(blocks[0]) in from_str
    message: dict[str, Any] = {"role": role, "content": blocks[0]["text"] if single else blocks}
    if ident is not None:
        message["id"] = ident
    if preamble:
        message["preamble"] = preamble
    return message
