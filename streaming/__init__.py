"""Pure streaming core: SSE decoding, Anthropic message accumulation, client protocol, history."""

from streaming.messages.accumulator import MessageAccumulator
from streaming.wire.sse import SSEDecoder, SSEEvent, iter_json_events

__all__ = ["MessageAccumulator", "SSEDecoder", "SSEEvent", "iter_json_events"]
