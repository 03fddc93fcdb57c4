"""A loopback Anthropic API that applies the prompt-caching rules and reports their usage."""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

from demo_model.binding import sign_reply
from demo_model.brain import Reply
from demo_model.wire import encode_reply, sse
from tests.cachesim.context import Managed, combined, manage
from tests.cachesim.rules import PromptCache, RuleError, Usage, points
from tests.faults.kinds import Fault, Status, Transcript, event_data
from tests.faults.upstream import FaultyUpstream

Replier = Callable[[dict[str, Any]], Reply]


class CachingUpstream:
    """Serves POST /v1/messages over real sockets: scripted replies, cache-aware usage.

    Built on FaultyUpstream's server, whose lock runs the chooser: each request is billed in
    arrival order, against the cache as earlier requests left it.
    """

    def __init__(
        self,
        replies: Replier,
        clock: Callable[[], float] = time.monotonic,
        window: int | None = None,
        density: float = 1.0,
    ) -> None:
        self.cache = PromptCache(clock)
        self.replies = replies
        # The model's context window, if any: a longer prompt is refused as the API does.
        # `density` scales the token count (a tokenizer that finds more tokens than ours).
        self.window, self.density = window, density
        self.bodies: list[dict[str, Any]] = []
        # What was billed, in order: a compacted request is two prompts, an edited one its
        # edited messages (tests/cachesim/context.py).
        self.prompts: list[dict[str, Any]] = []
        self.managed: list[Managed] = []
        self.usages: list[Usage] = []
        self.rejected: list[str] = []
        self.too_long: list[int] = []
        self._server = FaultyUpstream()
        self._server.set_chooser(self._serve)
        self.url = self._server.url

    def __enter__(self) -> CachingUpstream:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every request body received, refused ones included, in order."""
        return self._server.requests

    @property
    def served(self) -> list[str]:
        """What each request got: "Transcript" (a reply) or "Status" (refused)."""
        return self._server.served

    def close(self) -> None:
        """Stop serving."""
        self._server.close()

    def _serve(self, index: int, body: dict[str, Any]) -> Fault:
        refusal = self._refuse(body)
        if refusal is not None:
            return refusal
        managed = manage(body)
        try:
            steps = [self.cache.apply(prompt) for prompt in managed.prompts]
        except RuleError as err:
            self.rejected.append(str(err))
            return Status(400)
        self.bodies.append(body)
        self.prompts.extend(managed.prompts)
        self.usages.append(combined(steps))
        self.managed.append(managed)
        reply = self.replies(managed.reads)
        if managed.compaction is not None:
            reply = Reply([managed.compaction, *reply.blocks], reply.stop_reason)
        # Thinking blocks are bound to the request as sent: the handler refused any whose
        # prefix changed (demo_model/binding.py), so a rewritten history fails the run.
        reply = Reply(sign_reply(body, reply.blocks), reply.stop_reason)
        events = reply_events(f"msg_sim_{index:04d}", body, reply, steps, managed.applied_edits)
        return Transcript(b"".join(events))

    def _refuse(self, body: dict[str, Any]) -> Fault | None:
        """Refuse a prompt longer than the window, in the API's words, before caching it."""
        if self.window is None:
            return None
        prompt = points(body)
        tokens = math.ceil((prompt[-1].tokens if prompt else 0) * self.density)
        output = int(body.get("max_tokens", 0))
        if tokens > self.window:
            message = f"prompt is too long: {tokens} tokens > {self.window} maximum"
        elif tokens + output > self.window:
            message = (
                "input length and `max_tokens` exceed context limit: "
                f"{tokens} + {output} > {self.window}, decrease input length or `max_tokens` "
                "and try again"
            )
        else:
            return None
        self.too_long.append(tokens)
        return Status(400, message=message)


def reply_events(
    message_id: str,
    body: dict[str, Any],
    reply: Reply,
    usage: Usage | list[Usage],
    applied_edits: list[dict[str, Any]] | None = None,
) -> list[bytes]:
    """Return a reply's SSE events with the usage the API would report for it.

    Several usages are iterations (a compaction, then the message): the top-level fields
    are the last one's, and every one is listed under `iterations`.
    """
    steps = usage if isinstance(usage, list) else [usage]
    rng = random.Random(message_id)
    model = str(body.get("model", "sim"))
    events = list(encode_reply(message_id, model, reply.blocks, reply.stop_reason, 1, rng))
    start = event_data(events[0])
    start["message"]["usage"] = {**steps[-1].api(), "output_tokens": 1}
    events[0] = sse("message_start", start)
    delta = event_data(events[-2])
    output = delta["usage"]["output_tokens"]
    delta["usage"] = {**steps[-1].api(), "output_tokens": output}
    if len(steps) > 1:
        kinds = ["compaction"] * (len(steps) - 1) + ["message"]
        delta["usage"]["iterations"] = [
            {"type": kind, **step.api(), "output_tokens": output}
            for kind, step in zip(kinds, steps, strict=True)
        ]
    if applied_edits:
        delta["context_management"] = {"applied_edits": applied_edits}
    events[-2] = sse("message_delta", delta)
    return events
