"""Pure streaming core: SSE decoding, Anthropic message accumulation, client protocol, history."""

from streaming.accumulator import MessageAccumulator
from streaming.sse import SSEDecoder, SSEEvent, iter_json_events

__all__ = ["MessageAccumulator", "SSEDecoder", "SSEEvent", "iter_json_events"]
