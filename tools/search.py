"""Many tools: past a threshold, the deferrable ones are sent behind the API's tool search."""

from __future__ import annotations

from typing import Any

# The API's server-side BM25 tool search: it loads the deferred tools a search finds.
TOOL_SEARCH: dict[str, Any] = {
    "type": "tool_search_tool_bm25_20251119",
    "name": "tool_search_tool_bm25",
}


def searchable(
    loaded: list[dict[str, Any]], deferrable: list[dict[str, Any]], threshold: int
) -> list[dict[str, Any]]:
    """`loaded` then `deferrable`; past `threshold` tools in all (0: never) the deferrable
    ones carry `defer_loading: true` and the tool search tool comes first."""
    if threshold <= 0 or len(loaded) + len(deferrable) <= threshold:
        return [*loaded, *deferrable]
    return [TOOL_SEARCH, *loaded, *({**d, "defer_loading": True} for d in deferrable)]
