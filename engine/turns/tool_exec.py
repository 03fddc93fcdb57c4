"""Run a round's tool calls once each, with a timeout, storing every result first."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor, Future, TimeoutError
from dataclasses import dataclass
from typing import Any

from engine.errors import TurnCancelled
from engine.store.fence import Lease
from engine.store.messages import MessageStore, StoredRun
from models.chat import TOOL_RUNNING
from models.db import Database
from telemetry.metrics import TOOL_ERRORS, TOOL_RUNS, TOOL_SECONDS
from tools.registry import ToolContext, ToolOutcome, ToolRegistry

WAIT_STEP = 0.1
INTERRUPTED = (
    "The tool run was interrupted: the server running it stopped, so it may or may not have "
    "completed. Call the tool again if you still need its result."
)


@dataclass(frozen=True)
class ToolCall:
    """One closed tool_use block to answer."""

    tool_use_id: str
    name: str
    input: dict[str, Any]
    refusal: str | None = None


class ToolExecutor:
    """Executes tool calls in a pool, each id claimed before it runs so it never runs twice."""

    def __init__(
        self,
        registry: ToolRegistry,
        store: MessageStore,
        db: Database,
        pool: Executor,
        timeout: float,
    ) -> None:
        self.registry, self.store, self.db = registry, store, db
        self.pool, self.timeout = pool, timeout

    def run_all(
        self,
        lease: Lease,
        user_id: int,
        calls: list[ToolCall],
        cancelled: threading.Event | None = None,
        quiet: Callable[[], bool] = lambda: False,
    ) -> list[StoredRun]:
        """Return one stored run per call, in order, running each id at most once.

        When the turn stops quietly (`quiet()`: handed over or fenced out) nothing more is
        stored: TurnCancelled is raised and the claims stay for the next holder.
        """
        runs: dict[str, StoredRun] = {}
        pending = []
        stop = cancelled or threading.Event()
        for call in calls:
            claimed = self.store.claim_tool(lease, call.tool_use_id, call.name, call.input)
            if claimed is not None and claimed.status == TOOL_RUNNING:
                runs[call.tool_use_id] = self._save(lease, call, ToolOutcome(INTERRUPTED, True), 0)
            elif claimed is not None:
                runs[call.tool_use_id] = claimed
            elif call.refusal:
                runs[call.tool_use_id] = self._save(lease, call, ToolOutcome(call.refusal, True), 0)
            else:
                ctx = ToolContext(user_id, self.db, call.tool_use_id, lease.turn_id)
                future = self.pool.submit(self.registry.execute, call.name, call.input, ctx)
                pending.append((call, future, time.monotonic()))
        for call, future, started in pending:
            outcome = self._outcome(call, future, started, stop)
            if stop.is_set() and quiet():
                raise TurnCancelled()
            runs[call.tool_use_id] = self._save(lease, call, outcome, time.monotonic() - started)
        return [runs[c.tool_use_id] for c in calls]

    def _outcome(
        self,
        call: ToolCall,
        future: Future[ToolOutcome],
        started: float,
        cancelled: threading.Event,
    ) -> ToolOutcome:
        """Wait for one tool, giving up at its timeout or when the turn is cancelled."""
        while True:
            if cancelled.is_set():
                future.cancel()
                return ToolOutcome(
                    "The tool was not run to completion: the turn was cancelled.", True
                )
            remaining = started + self.timeout - time.monotonic()
            try:
                return future.result(timeout=min(WAIT_STEP, max(0.0, remaining)))
            except TimeoutError:
                if remaining <= 0:
                    # A queued call must not run after its "timed out" result was sent.
                    future.cancel()
                    return ToolOutcome(
                        f"The tool '{call.name}' timed out after "
                        f"{self.timeout:g}s. Try a narrower query.",
                        True,
                    )

    def _save(
        self, lease: Lease, call: ToolCall, outcome: ToolOutcome, seconds: float
    ) -> StoredRun:
        # Only our tools' names become labels: a model may call any name it makes up.
        tool = call.name if self.registry.get(call.name) is not None else "unknown"
        TOOL_RUNS.labels(tool).inc()
        TOOL_SECONDS.labels(tool).observe(seconds)
        if outcome.is_error:
            TOOL_ERRORS.labels(tool).inc()
        return self.store.finish_tool(
            lease,
            call.tool_use_id,
            [{"type": "text", "text": outcome.content}],
            outcome.is_error,
            int(seconds * 1000),
        )


def tool_calls(
    content: list[dict[str, Any]], input_errors: dict[str, str], refuse_all: str | None = None
) -> list[ToolCall]:
    """Return the distinct tool_use blocks of a message; bad input or `refuse_all` -> not run."""
    calls: dict[str, ToolCall] = {}
    for block in content:
        ident = block.get("id")
        if block.get("type") != "tool_use" or ident in calls:
            continue
        refusal = refuse_all
        if refusal is None and ident in input_errors:
            refusal = (
                f"The tool was not run because its {input_errors[ident]}. "
                "Call it again with a valid JSON object as input."
            )
        calls[ident] = ToolCall(ident, block.get("name", ""), block.get("input") or {}, refusal)
    return list(calls.values())


def result_block(run: StoredRun) -> dict[str, Any]:
    """Return the tool_result block that answers `run`."""
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": run.tool_use_id,
        "content": run.result,
    }
    if run.is_error:
        block["is_error"] = True
    return block
