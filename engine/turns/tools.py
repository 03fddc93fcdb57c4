"""Run a round's tool calls once each, in the tool pool, storing every result first.

Each tool_use id is claimed in the database before its tool runs, so it never runs twice,
whichever worker or retry gets there. A tool with side effects stores its result in its own
write transaction (`ToolContext.applied`): a run found unfinished, after a crash or a
database outage, made no change and is run again; one found done is answered from the
store. A read-only tool whose database became unreachable did nothing, so it is run again
once the database is back, for as long as STORE_OUTAGE_SECONDS allows. Any other failure is
an `is_error` result.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Callable
from concurrent.futures import Executor
from contextvars import copy_context
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from config import Timings
from domain.backoff import Backoff
from engine.runtime import this_task
from engine.store.durable import Store
from engine.store.fence import Lease
from engine.store.messages import MessageStore, StoredRun
from models.chat import TOOL_DONE, TOOL_RUNNING
from models.db import Database, is_outage
from telemetry import tracing
from telemetry.metrics import TOOL_ERRORS, TOOL_RUNS, TOOL_SECONDS
from tools.registry import ClaimLost, ToolContext, ToolOutcome, ToolRegistry

if TYPE_CHECKING:  # the mcp SDK is imported only where MCP servers are configured
    from tools.mcp_servers.links import McpHub, McpTool

INTERRUPTED = (
    "The tool run was interrupted: the server running it stopped, so it may or may not have "
    "completed. Call the tool again if you still need its result."
)
CANCELLED = "The tool was not run to completion: the turn was cancelled."
UNREACHABLE = "The tool '{name}' could not reach the database. Try again later."
# Characters of unusable input quoted back from each end: enough to see the fault, bounded.
EXCERPT = 200


@dataclass(frozen=True)
class BadInput:
    """Why a call's input cannot be used: the problem, the raw text, whether the reply cut it."""

    problem: str
    raw: str = ""
    cut: bool = False
    # The bounded quote of `raw`, when rebuilt from a stored block (which keeps no raw text).
    quoted: str = ""

    def stored(self) -> dict[str, Any]:
        """What the stored tool_use block keeps under `input_error`, for whoever answers it."""
        return {
            "problem": self.problem,
            "quoted": self.quoted or excerpt(self.raw),
            "cut": self.cut,
        }

    @classmethod
    def from_block(cls, block: dict[str, Any]) -> BadInput | None:
        """The unusable input a stored tool_use block records, if any."""
        kept = block.get("input_error")
        if not isinstance(kept, dict):
            return None
        problem, quoted = str(kept.get("problem") or "input was unusable"), kept.get("quoted")
        return cls(problem, "", bool(kept.get("cut")), str(quoted or '""'))

    def refusal(self) -> str:
        """The is_error result the model reads: what went wrong, what arrived, what to do."""
        if self.cut:
            why = (
                "The tool was not run: your input was cut off at the output token limit, "
                f"mid-parameter ({self.problem}). Call it again with less input, as one "
                "complete JSON object."
            )
        else:
            why = (
                f"The tool was not run because its {self.problem}. "
                "Call it again with a valid JSON object as input."
            )
        return f"{why} What arrived: {self.quoted or excerpt(self.raw)}"


def excerpt(raw: str) -> str:
    """The raw input wrapped in a JSON object, whole or as its two ends when long."""
    if len(raw) <= 2 * EXCERPT:
        return json.dumps({"input_text": raw})
    return json.dumps(
        {"input_start": raw[:EXCERPT], "input_end": raw[-EXCERPT:], "input_chars": len(raw)}
    )


@dataclass(frozen=True)
class ToolCall:
    """One closed tool_use block to answer."""

    tool_use_id: str
    name: str
    input: dict[str, Any]
    refusal: str | None = None


class ToolRunner:
    """Executes tool calls in the tool pool; a claim before each run keeps it to one run."""

    def __init__(
        self,
        registry: ToolRegistry,
        messages: MessageStore,
        db: Database,
        pool: Executor,
        store: Store,
        timings: Timings,
        hub: McpHub | None = None,
    ) -> None:
        self.registry, self.messages, self.db = registry, messages, db
        self.pool, self.store, self.timings = pool, store, timings
        # MCP servers' tools: called on this loop, claimed and approved as our own are.
        self.hub = hub
        self._rng = random.Random()

    def definitions(
        self, base: list[dict[str, Any]], eager: bool, search_threshold: int = 0
    ) -> list[dict[str, Any]]:
        """The tools sent with a model call: `base` (the registry's), then the MCP servers'
        (deferred behind tool search past `search_threshold` tools)."""
        if self.hub is None:
            return base
        return self.hub.definitions(base, eager, search_threshold)

    def remote(self, name: str) -> McpTool | None:
        """The MCP tool called `name`, when no tool of ours is."""
        if self.hub is None or self.registry.get(name) is not None:
            return None
        return self.hub.get(name)

    async def run_all(
        self, lease: Lease, user_id: int, calls: list[ToolCall], quiet: Callable[[], bool]
    ) -> list[StoredRun]:
        """Return one stored run per call, in order, running each id at most once.

        A cancelled turn still answers every call (the unfinished ones as cancelled); a turn
        that stops quietly (`quiet()`: handed over or fenced out) stores nothing more and
        lets the cancellation through, leaving the claims to the next holder.
        """
        runs: dict[str, StoredRun] = {}
        pending: dict[str, tuple[ToolCall, asyncio.Task[ToolOutcome], float]] = {}
        loop = asyncio.get_running_loop()
        try:
            for call in calls:
                run = await self._claim(lease, call, call.refusal, user_id)
                if run is not None:
                    runs[call.tool_use_id] = run
                    continue
                ctx = self._context(lease, call, user_id)
                task = loop.create_task(self._execute(lease, call, ctx))
                pending[call.tool_use_id] = (call, task, time.monotonic())
            for call, task, started in pending.values():
                outcome = await task
                seconds = time.monotonic() - started
                runs[call.tool_use_id] = await self._save(lease, call, outcome, seconds)
        except asyncio.CancelledError:
            for _, task, _ in pending.values():
                task.cancel()
            if quiet():
                raise
            this_task().uncancel()
            for call in calls:
                if call.tool_use_id in runs:
                    continue
                if call.tool_use_id in pending:
                    seconds = time.monotonic() - pending[call.tool_use_id][2]
                    outcome = ToolOutcome(CANCELLED, True)
                    runs[call.tool_use_id] = await self._save(lease, call, outcome, seconds)
                else:
                    run = await self._claim(lease, call, CANCELLED)
                    assert run is not None
                    runs[call.tool_use_id] = run
        return [runs[c.tool_use_id] for c in calls]

    async def _claim(
        self, lease: Lease, call: ToolCall, refusal: str | None, user_id: int = 0
    ) -> StoredRun | None:
        """Claim the call's id; return its answer if it has one (or gets `refusal`) now.

        None means "claimed: run it". A side-effect tool's first claim stores it awaiting
        the user's approval, with a preview of what it would change (bad input: refused).
        """
        preview = None
        tool, remote = self.registry.get(call.name), self.remote(call.name)
        if remote is not None and not refusal and not remote.read_only:
            # Untrusted until approved: only the operator's word (readOnlyTools) skips it.
            preview = remote.preview(call.input)
        if tool is not None and tool.side_effects and not refusal:
            known = await self.store.durable(
                self.messages.stored_run, lease.session_id, call.tool_use_id
            )
            if known is None:
                ctx = ToolContext(user_id, self.db, call.tool_use_id, lease.turn_id)
                shown = await self._in_pool(self.registry.preview, call.name, call.input, ctx)
                if isinstance(shown, ToolOutcome):
                    refusal = shown.content
                else:
                    preview = shown
        if preview is not None and await self.store.durable(
            self.messages.granted, lease.session_id, call.name
        ):
            preview = None  # the user answered "always for this session"
        claimed = await self.store.durable(
            self.messages.claim_tool,
            lease,
            call.tool_use_id,
            call.name,
            call.input,
            preview,
            # Run again after a worker's death: our write tools (their change commits with
            # their result) and the MCP tools the operator marked idempotent.
            (tool is not None and tool.side_effects) or (remote is not None and remote.idempotent),
        )
        if claimed is not None and claimed.status == TOOL_RUNNING:
            return await self._save(lease, call, ToolOutcome(INTERRUPTED, True), 0.0)
        if claimed is not None:
            return claimed
        if refusal:
            return await self._save(lease, call, ToolOutcome(refusal, True), 0.0)
        return None

    async def _in_pool(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run a tool-side function in the tool pool within TOOL_TIMEOUT."""
        loop = asyncio.get_running_loop()
        run = loop.run_in_executor(self.pool, fn, *args)
        try:
            return await asyncio.wait_for(run, self.timings.tool_timeout)
        except TimeoutError:
            return ToolOutcome(f"The tool '{args[0]}' timed out preparing its preview.", True)

    def _context(self, lease: Lease, call: ToolCall, user_id: int) -> ToolContext:
        """The handler's context; a side-effect tool's records its result with its change."""
        tool = self.registry.get(call.name)
        receipt = None
        if tool is not None and tool.side_effects:
            receipt = partial(
                self.messages.applied, lease, call.tool_use_id, started=time.monotonic()
            )
        return ToolContext(user_id, self.db, call.tool_use_id, lease.turn_id, receipt)

    async def _execute(self, lease: Lease, call: ToolCall, ctx: ToolContext) -> ToolOutcome:
        """Run one tool in an `execute_tool <name>` span."""
        with tracing.tool_span(call.name, call.tool_use_id, call.input) as span:
            remote = self.remote(call.name)
            if remote is not None and self.hub is not None:
                outcome = await self.hub.call(call.name, call.input, ctx.user_id)
            else:
                outcome = await self._run(lease, call, ctx)
            tracing.tool_answered(span, outcome.content, outcome.is_error)
            return outcome

    async def _run(self, lease: Lease, call: ToolCall, ctx: ToolContext) -> ToolOutcome:
        """Run one tool in the pool within TOOL_TIMEOUT, waiting out database outages."""
        t, loop = self.timings, asyncio.get_running_loop()
        started = time.monotonic()
        backoff = Backoff(t.store_backoff_base, t.store_backoff_cap, self._rng)
        while True:
            # In the span's context, so the tool's statements are traced inside it.
            execute = partial(copy_context().run, self.registry.execute, call.name, call.input, ctx)
            run = loop.run_in_executor(self.pool, execute)
            try:
                # At the timeout the call is cancelled: one still queued never runs after
                # its "timed out" result was sent.
                return await asyncio.wait_for(run, t.tool_timeout)
            except TimeoutError:
                return ToolOutcome(
                    f"The tool '{call.name}' timed out after {t.tool_timeout:g}s. "
                    "Try a narrower query.",
                    True,
                )
            except ClaimLost:
                return ToolOutcome(INTERRUPTED, True)  # fenced out: storing it fails too
            except Exception as err:
                if not is_outage(err) or time.monotonic() - started >= t.store_outage:
                    return ToolOutcome(UNREACHABLE.format(name=call.name), True)
            await asyncio.sleep(backoff.next())
            # The try the outage cut short may have committed: then it is not made again.
            done = await self._applied(lease, call, ctx)
            if done is not None:
                return done

    async def _applied(self, lease: Lease, call: ToolCall, ctx: ToolContext) -> ToolOutcome | None:
        """The result a side-effect tool stored with its change, if a try that failed made it."""
        if ctx.receipt is None:
            return None
        try:
            run = await self.store.durable(
                self.messages.stored_run, lease.session_id, call.tool_use_id
            )
        except Exception:
            return None  # still out: the next try finds out, or gives up
        if run is None or run.status != TOOL_DONE:
            return None
        text, *sources = run.result
        return ToolOutcome(text["text"], run.is_error, tuple(sources))

    async def _save(
        self, lease: Lease, call: ToolCall, outcome: ToolOutcome, seconds: float
    ) -> StoredRun:
        # Only our tools' names become labels: a model may call any name it makes up.
        remote = self.remote(call.name)
        if remote is not None:
            tool = f"mcp:{remote.server}"
        else:
            tool = call.name if self.registry.get(call.name) is not None else "unknown"
        TOOL_RUNS.labels(tool).inc()
        TOOL_SECONDS.labels(tool).observe(seconds)
        if outcome.is_error:
            TOOL_ERRORS.labels(tool).inc()
        return await self.store.durable(
            self.messages.finish_tool,
            lease,
            call.tool_use_id,
            outcome.blocks(),
            outcome.is_error,
            int(seconds * 1000),
        )


def tool_calls(
    content: list[dict[str, Any]], input_errors: dict[str, BadInput], refuse_all: str | None = None
) -> list[ToolCall]:
    """Return the distinct tool_use blocks of a message; bad input or `refuse_all` -> not run."""
    calls: dict[str, ToolCall] = {}
    for block in content:
        ident = block.get("id")
        if block.get("type") != "tool_use" or not isinstance(ident, str) or ident in calls:
            continue
        # After a takeover the round's errors are gone; the stored block still says.
        bad = input_errors.get(ident) or BadInput.from_block(block)
        refusal = bad.refusal() if bad is not None else refuse_all
        calls[ident] = ToolCall(ident, block.get("name", ""), block.get("input") or {}, refusal)
    return list(calls.values())
