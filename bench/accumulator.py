"""Our decoder + accumulator against the SDK's messages.stream() helper on the same bytes.

Run: make bench (or python -m bench.accumulator). Prints ratios from one run.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from bench.pipeline import ours as end_to_end
from bench.streams import big_tool_input, chunked, sdk_client, tool_stream
from streaming.messages.accumulator import MessageAccumulator
from streaming.wire.sse import iter_json_events

KIB = 1024


def ours(raw: bytes) -> dict[str, Any]:
    """Decode and accumulate the stream; return the final message."""
    acc = MessageAccumulator()
    for event in iter_json_events(chunked(raw)):
        acc.feed(event)
    return acc.message()


def sdk_helper(raw: bytes) -> dict[str, Any]:
    """Run the SDK's messages.stream() helper over the same bytes via a mock transport."""

    client = sdk_client(raw)
    with client.messages.stream(
        model="bench", max_tokens=10, messages=[{"role": "user", "content": "x"}]
    ) as stream:
        return stream.get_final_message().to_dict()


def cpu(fn: Callable[[bytes], Any], raw: bytes, repeat: int = 1) -> tuple[float, Any]:
    """Return the best CPU time of `repeat` runs and the last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.process_time()
        result = fn(raw)
        best = min(best, time.process_time() - start)
    return best, result


def main() -> None:
    """Print the speed-up over the SDK helper and how our time grows with input size."""
    payload = big_tool_input(187 * KIB)
    raw = tool_stream(payload, deltas=4783)
    t_sdk, sdk_msg = cpu(sdk_helper, raw)
    t_ours, our_msg = cpu(ours, raw, repeat=5)
    assert our_msg["content"][0]["input"] == sdk_msg["content"][0]["input"] == payload
    print(f"tool input: {len(json.dumps(payload)) // KIB} KiB in 4783 input_json_delta events")
    print(f"SDK messages.stream() helper / ours (CPU): {t_sdk / t_ours:,.0f}x")
    t_e2e, _ = cpu(end_to_end, raw, repeat=3)
    print(
        f"SDK helper alone / ours end to end (decode, accumulate, client events, log, reader): "
        f"{t_sdk / t_e2e:,.0f}x"
    )
    base = None
    for scale in (1, 2, 4):
        scaled = tool_stream(big_tool_input(47 * KIB * scale), deltas=1200 * scale)
        t, _ = cpu(ours, scaled, repeat=5)
        base = base or t
        print(f"ours at {scale}x input: {t / base:.2f}x the 1x time")
    sdk_times = [
        cpu(sdk_helper, tool_stream(big_tool_input(47 * KIB * k), 1200 * k))[0] for k in (1, 2)
    ]
    print(f"SDK helper at 2x input: {sdk_times[1] / sdk_times[0]:.2f}x its 1x time (quadratic)")


if __name__ == "__main__":
    main()
