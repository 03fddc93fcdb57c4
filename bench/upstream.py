"""Serve a loopback Anthropic upstream in its own process for bench.load.

Every request gets one long text answer paced at `delay` seconds per event, so what the
server spends is the streaming path itself, not tools or database rounds.
"""

from __future__ import annotations

import sys
import time

from bench.streams import text_stream
from tests.faults.upstream import FaultyUpstream, Transcript


def main() -> None:
    """Serve until killed; print the URL. Arguments: delay, text events per answer."""
    delay = float(sys.argv[1]) if len(sys.argv) > 1 else 0.025
    events = int(sys.argv[2]) if len(sys.argv) > 2 else 400
    upstream = FaultyUpstream()
    upstream.default = Transcript(text_stream(events), delay=delay)
    print(upstream.url, flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
