"""Model calls of a turn: one attempt streams a message, failed attempts are retried.

An attempt reads its stream in a task of its own, so each upstream read resumes only the
attempt's frames, not the whole turn's. A stall watch (a timer of the loop, re-armed from
the last upstream event, not a thread) cancels it when the model has been silent for
FIRST_TOKEN_TIMEOUT before its first content block, or STALL_TIMEOUT after.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from functools import partial
from typing import Any

from domain.errors import TurnFailed, UpstreamInterrupted
from engine.runtime import this_task
from engine.store.fence import Lease
from engine.turns.outbox import Outbox
from engine.turns.pacing import Cadence
from engine.turns.round import MessageRound, RoundResult
from engine.turns.shared import TurnDeps
from engine.turns.tool_ids import tool_ids
from engine.turns.window import Fit
from engine.upstream.conversation import Conversation, Outgoing, outgoing
from engine.upstream.retry import MODEL_ERRORS, Failure, classify
from engine.upstream.selection import Plan
from streaming.wire import events as E
from streaming.wire.sse import JSONEvents
from telemetry import tracing
from telemetry.metrics import THINKING_DROPPED, TOKEN_COUNTS, UPSTREAM_RETRIES

log = logging.getLogger(__name__)
STALLED = "The model stream stalled."
NO_START = "The model did not start answering in time."


class StallWatch:
    """Cancels the attempt's task when the model has been silent too long."""

    def __init__(
        self, current: MessageRound, task: asyncio.Task[Any], stall: float, first_token: float
    ) -> None:
        self.current, self.task, self.stall, self.first_token = current, task, stall, first_token
        self.loop = asyncio.get_running_loop()
        self.fired = False
        self._timer = self.loop.call_later(min(stall, first_token), self._check)

    def _check(self) -> None:
        current = self.current
        limit = self.stall if current.saw_content else self.first_token
        silent = time.monotonic() - current.last_activity
        if silent < limit:
            self._timer = self.loop.call_later(limit - silent, self._check)
            return
        log.warning("no model event for %.1fs, abandoning the attempt", silent)
        self.fired = True
        self.task.cancel()

    def close(self) -> None:
        """The attempt is over."""
        self._timer.cancel()


class ModelCalls:
    """Streams one model message per round, retrying failed attempts within the policy."""

    def __init__(self, deps: TurnDeps, turn_id: str) -> None:
        self.deps, self.turn_id = deps, turn_id
        # The attempt in flight, if any: a turn that stops ends it.
        self.current: MessageRound | None = None
        # What the last call of this turn left out, once one was made: (turns, notes).
        self.trimmed: tuple[int, int] | None = None
        self._rng = random.Random()

    async def stream(
        self,
        history: list[dict[str, Any]],
        outbox: Outbox,
        lease: Lease,
        conversation: Conversation,
    ) -> tuple[RoundResult, Conversation]:
        """Call the model until one attempt yields a whole, stored message.

        Every request is built by the conversation (engine/upstream/conversation.py). Only
        time spent waiting between attempts counts against the retry budget: a stall
        noticed after a minute, or a long stream that breaks late, is still retried. The
        documented 400 for a thinking block bound to another prefix is answered at once,
        once: the conversation sends `drop_block` from then on (returned, and stored).
        """
        policy, waited, attempt = self.deps.retry, 0.0, 0
        used = tool_ids(history)
        window, refitted = self.deps.window, False
        current_tools = self.deps.tools_sent()
        tools = conversation.tools(current_tools)
        while True:
            # Counted once per round: a retry sends what was counted (or trimmed by a refusal).
            fit = await self._fit(history, lease, conversation, count=attempt == 0 and not refitted)
            self._announce(fit.plan, history, outbox)
            sent = outgoing(conversation, fit.plan, self.deps.model.today(), current_tools)
            self.current = current = MessageRound(
                self.deps.messages, outbox, lease, used, sent.preamble
            )
            try:
                result = await self._attempt(sent, tools, conversation, current)
            except MODEL_ERRORS as err:
                failure = classify(err)
                current.discard(failure.code, attempt)
                self.current = None
                if failure.bound and not conversation.drop_blocks:
                    log.warning(
                        "turn %s: a thinking block's prefix changed; dropping such "
                        "blocks from now on",
                        self.turn_id,
                    )
                    conversation = conversation.dropping()
                    if self.deps.prompts is not None:
                        await self.deps.store.durable(
                            self.deps.prompts.drop_blocks, lease.session_id
                        )
                    continue
                if failure.too_long and not refitted:
                    # Once per round: trim by what the API counted, then call again at once.
                    refitted = True
                    window.refused(lease.session_id, fit, *failure.too_long)
                    if window.fit(lease.session_id, history, tools).estimate < fit.estimate:
                        log.warning("turn %s: prompt too long, trimmed further", self.turn_id)
                        continue
                wait = policy.delay(attempt, failure.retry_after, self._rng)
                if not failure.retryable or not policy.allows(attempt, waited, wait):
                    raise TurnFailed(failure.code, _final_message(failure, attempt)) from err
                log.warning(
                    "turn %s: model call failed (%s), retry %d in %.2fs",
                    self.turn_id,
                    failure.code,
                    attempt + 1,
                    wait,
                )
                UPSTREAM_RETRIES.labels(failure.code).inc()
                await asyncio.sleep(wait)
                waited += wait
                attempt += 1
                continue
            self.current = None
            if result.dropped:
                # Recorded with the turn (and in the message's usage, and its trace).
                THINKING_DROPPED.inc(result.dropped)
                if self.deps.prompts is not None:
                    outbox.write(partial(self.deps.prompts.dropped, lease, result.dropped))
            await outbox.settled()
            window.observe(lease.session_id, fit, result.usage)
            return result, conversation

    async def _fit(
        self, history: list[dict[str, Any]], lease: Lease, conversation: Conversation, count: bool
    ) -> Fit:
        """Plan the request; near the window, let the API's count decide (else the estimate)."""
        window = self.deps.window
        current_tools = self.deps.tools_sent()
        tools = conversation.tools(current_tools)
        fit = window.fit(lease.session_id, history, tools)
        if not fit.near or not count:
            return fit
        sent = outgoing(conversation, fit.plan, self.deps.model.today(), current_tools)
        try:
            counted = await asyncio.wait_for(
                self.deps.model.count(sent.messages, tools, **_shape(conversation, sent)),
                self.deps.timings.count_tokens,
            )
        except (*MODEL_ERRORS, TimeoutError, ValueError) as err:
            # Loud: a count the API always refuses would otherwise leave the estimate alone.
            log.warning("turn %s: token count failed (%s), using the estimate", self.turn_id, err)
            TOKEN_COUNTS.labels("failed").inc()
            return fit
        window.counted(lease.session_id, fit, counted)
        if fit.fits(counted):
            TOKEN_COUNTS.labels("fits").inc()
            return fit
        TOKEN_COUNTS.labels("refit").inc()
        # The count says it does not fit: plan again with what it taught the window.
        return window.fit(lease.session_id, history, tools)

    async def _attempt(
        self,
        sent: Outgoing,
        tools: list[dict[str, Any]],
        conversation: Conversation,
        current: MessageRound,
    ) -> RoundResult:
        """One model call in a `chat <model>` span."""
        with tracing.model_span(self.deps.model.model, sent.messages) as span:
            try:
                result = await self._stream_once(sent, tools, conversation, current)
            except MODEL_ERRORS as err:
                tracing.failed(span, classify(err).code)
                raise
            tracing.model_answered(
                span,
                current.response_model,
                current.response_id,
                result.stop_reason,
                result.usage,
                result.content,
            )
            return result

    async def _stream_once(
        self,
        sent: Outgoing,
        tools: list[dict[str, Any]],
        conversation: Conversation,
        current: MessageRound,
    ) -> RoundResult:
        """One model call, streamed through `current`; raise UpstreamInterrupted on a stall."""
        t = self.deps.timings
        reading = asyncio.get_running_loop().create_task(
            self._read(sent, tools, conversation, current)
        )
        watch = StallWatch(current, reading, t.stall_timeout, t.first_token_timeout)
        try:
            # A stopped turn's cancellation reaches `reading` through this await.
            return await reading
        except asyncio.CancelledError:
            if not watch.fired or this_task().cancelling():
                raise
            message = STALLED if current.saw_content else NO_START
            raise UpstreamInterrupted("stalled", message) from None
        finally:
            watch.close()

    async def _read(
        self,
        sent: Outgoing,
        tools: list[dict[str, Any]],
        conversation: Conversation,
        current: MessageRound,
    ) -> RoundResult:
        """Open the call and feed every upstream event to `current`."""
        shape = _shape(conversation, sent)
        async with self.deps.model.open(sent.messages, tools, **shape) as chunks:
            events, cadence = JSONEvents(), Cadence(self.deps.pacer)
            try:
                async for chunk in chunks:
                    cadence.arrived()
                    for event in events.feed(chunk):
                        current.feed(event)
                    await cadence.next()
            finally:
                cadence.close()
            events.flush()
        return current.finish()

    def _announce(self, plan: Plan, history: list[dict[str, Any]], outbox: Outbox) -> None:
        """Tell clients when a call leaves out more than the call before it did."""
        state = (plan.omitted_turns, plan.elided_results)
        before = self.trimmed if self.trimmed is not None else (None if plan.changed else state)
        self.trimmed = state
        if state == before:
            return
        first = history[plan.first_kept] if plan.first_kept < len(history) else {}
        outbox.emit(
            E.context_trimmed(
                plan.omitted_turns, plan.omitted_messages, plan.elided_results, first.get("id")
            )
        )


def _shape(conversation: Conversation, sent: Outgoing) -> dict[str, Any]:
    """The conversation's part of a request: its system, binding control and betas."""
    return {
        "system": conversation.prompt.system,
        "drop_blocks": conversation.drop_blocks,
        "betas": sent.betas,
    }


def _final_message(failure: Failure, attempt: int) -> str:
    if not failure.retryable:
        return failure.message
    tries = f"{attempt + 1} attempt{'s' if attempt else ''}"
    return f"{failure.message} Gave up after {tries}; what was completed is saved. Try again."
