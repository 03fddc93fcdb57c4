"""Tool declarations and the registry that validates input and runs handlers."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from marshmallow import Schema, ValidationError

from models.db import OUTAGE_ERRORS
from tools.jsonschema import schema_to_json

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from models.db import Database

log = logging.getLogger(__name__)
Result = TypeVar("Result")

MAX_RESULT_CHARS = 60_000
# A result's search_result blocks: the summary block plus the top rows, within the room its
# text leaves under MAX_RESULT_CHARS and at most MAX_SOURCE_CHARS of JSON.
MAX_SOURCES = 21
MAX_SOURCE_CHARS = 16_000


class ClaimLost(Exception):
    """A side-effect tool's call is no longer this worker's to run: its write is rolled back."""


# Stores a side-effect tool's result blocks in the tool's own write session; False when the
# call's claim was lost (engine/store/messages.py's MessageStore.applied, bound to the call).
Receipt = Callable[["Session", list[dict[str, Any]]], bool]


@dataclass(frozen=True)
class ToolContext:
    """What a handler may use: the authenticated user's id, the database, the call's ids."""

    user_id: int
    db: Database
    tool_use_id: str = ""
    turn_id: str = ""
    receipt: Receipt | None = None

    def applied(self, s: Session, result: Any) -> None:
        """In a side-effect tool's write transaction: record its result there, or roll back.

        The change and the record that it was made then commit together, so a run found
        unfinished after a crash made no change and can run again (never twice).
        """
        if self.receipt is not None and not self.receipt(s, outcome_of(result).blocks()):
            raise ClaimLost(self.tool_use_id)


@dataclass(frozen=True)
class ToolOutcome:
    """A tool result as the model will read it: its text, then the search results it rests on."""

    content: str
    is_error: bool = False
    sources: tuple[dict[str, Any], ...] = ()

    def blocks(self) -> list[dict[str, Any]]:
        """Return the tool_result content: one text block, then the search_result blocks."""
        return [{"type": "text", "text": self.content}, *self.sources]


@dataclass(frozen=True)
class Sourced:
    """A handler's result with the search_result blocks its figures rest on (citable)."""

    result: Any
    sources: list[dict[str, Any]]


class ToolInputError(Exception):
    """Raised by a handler when valid-looking input cannot be served (e.g. unknown category)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field, self.message = field, message


@dataclass(frozen=True)
class Tool:
    """One tool: declared once, its JSON Schema derived from its marshmallow schema."""

    name: str
    description: str
    schema: type[Schema]
    handler: Callable[[ToolContext, dict[str, Any]], Any]
    side_effects: bool = False
    # What a side-effect tool would change, for the user to approve before it runs.
    preview: Callable[[ToolContext, dict[str, Any]], dict[str, Any]] | None = None

    def __post_init__(self) -> None:
        if self.side_effects and self.preview is None:
            raise ValueError(f"tool {self.name!r} has side effects, so it needs a preview")

    def definition(self) -> dict[str, Any]:
        """Return the Anthropic tool parameter for this tool."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": schema_to_json(self.schema()),
        }


class ToolRegistry:
    """Looks tools up by name and turns every failure into an `is_error` outcome."""

    def __init__(self, tools: Iterable[Tool]) -> None:
        self._tools = {t.name: t for t in tools}
        self._definitions = [t.definition() for t in self._tools.values()]
        # Built once: the prompt cache needs the same bytes (and the same list) every call.
        self._eager = [{**d, "eager_input_streaming": True} for d in self._definitions]

    def definitions(self, eager: bool = False) -> list[dict[str, Any]]:
        """Return the tool parameters to send with every model call (eager: input unbuffered)."""
        return self._eager if eager else self._definitions

    def get(self, name: str) -> Tool | None:
        """Return the tool called `name`, if any."""
        return self._tools.get(name)

    def execute(self, name: str, raw_input: Any, ctx: ToolContext) -> ToolOutcome:
        """Validate `raw_input`, run the handler and return what the model should read.

        Every failure is an outcome, but a database outage: that is raised.
        """
        loaded = self._load(name, raw_input)
        if isinstance(loaded, ToolOutcome):
            return loaded
        tool, data = loaded
        return outcome_of(_run(tool, tool.handler, ctx, data))

    def preview(self, name: str, raw_input: Any, ctx: ToolContext) -> ToolOutcome | dict[str, Any]:
        """Validate input and describe what a side-effect tool would change, without changing it.

        Failures are `is_error` outcomes worded as `execute` words them, and a database outage
        is raised, as there. A read-only tool changes nothing, so it has no preview: asking
        for one is an `is_error` outcome (after its input was validated).
        """
        loaded = self._load(name, raw_input)
        if isinstance(loaded, ToolOutcome):
            return loaded
        tool, data = loaded
        if tool.preview is None:
            return ToolOutcome(f"The tool '{name}' changes nothing, so it has no preview.", True)
        return _run(tool, tool.preview, ctx, data)

    def _load(self, name: str, raw_input: Any) -> ToolOutcome | tuple[Tool, dict[str, Any]]:
        """Return the tool and its validated input, or the error outcome saying why not."""
        tool = self._tools.get(name)
        if tool is None:
            known = ", ".join(sorted(self._tools))
            return ToolOutcome(f"Unknown tool '{name}'. Available tools: {known}.", True)
        if not isinstance(raw_input, dict):
            return ToolOutcome("Tool input must be a JSON object.", True)
        try:
            return tool, tool.schema().load(raw_input)
        except ValidationError as err:
            return ToolOutcome(_invalid_input_message(err), True)


def _run(
    tool: Tool,
    func: Callable[[ToolContext, dict[str, Any]], Result],
    ctx: ToolContext,
    data: dict[str, Any],
) -> Result | ToolOutcome:
    """Call `func` (a handler or a preview); every failure but an outage becomes an outcome."""
    try:
        return func(ctx, data)
    except ToolInputError as err:
        return ToolOutcome(f"Invalid input for field '{err.field}': {err.message}", True)
    except OUTAGE_ERRORS:
        raise  # the database is out: the caller waits it out and runs the tool again
    except ClaimLost:
        raise  # fenced out: the change was rolled back, and the call is another's to answer
    except Exception as err:
        log.exception("tool %s failed", tool.name)
        return ToolOutcome(f"The tool '{tool.name}' failed: {type(err).__name__}. Try again.", True)


def outcome_of(result: Any) -> ToolOutcome:
    """What the model reads of a handler's result (an outcome already is one)."""
    if isinstance(result, ToolOutcome):
        return result
    if isinstance(result, Sourced):
        text = _encode_result(result.result)
        return ToolOutcome(text, sources=_bounded(result.sources, MAX_RESULT_CHARS - len(text)))
    return ToolOutcome(_encode_result(result))


def _invalid_input_message(err: ValidationError) -> str:
    messages = err.messages if isinstance(err.messages, dict) else {"_schema": err.messages}
    parts = [f"'{field}': {' '.join(map(str, msgs))}" for field, msgs in messages.items()]
    return "Invalid tool input. Fix these fields and call the tool again: " + "; ".join(parts)


def _bounded(sources: list[dict[str, Any]], room: int) -> tuple[dict[str, Any], ...]:
    """Keep the leading search results that fit MAX_SOURCES and the room left."""
    room, kept = min(room, MAX_SOURCE_CHARS), []
    for block in sources[:MAX_SOURCES]:
        room -= len(json.dumps(block, separators=(",", ":")))
        if room < 0:
            break
        kept.append(block)
    return tuple(kept)


def _encode_result(result: Any) -> str:
    text = result if isinstance(result, str) else json.dumps(result, separators=(",", ":"))
    if len(text) <= MAX_RESULT_CHARS:
        return text
    # Cut at a fixed size and say so, so the model knows to narrow its query.
    note = f"\n[truncated: result was {len(text)} characters; narrow the filters or lower limit]"
    return text[:MAX_RESULT_CHARS] + note
