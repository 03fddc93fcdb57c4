"""Cite the tool results an answer rests on, as Claude does with search_result blocks.

An answer is written as parts: plain text, and `Cite`s, the sentences that state a figure
taken from tool results, each naming the search results it rests on (by source id, or by
title where the tool's JSON shows no id). The request's search results are numbered in order
across all of its messages and tool results, as the API numbers them; a cited sentence becomes
a text block of its own carrying one `search_result_location` citation per result. A sentence
whose results are not all in the request (left out, or never sent) is written uncited.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Cite:
    """A sentence stating a figure, and the search results (sources or titles) it rests on."""

    text: str
    refs: tuple[str, ...]


Part = str | Cite
# One line of an answer: plain, one cited sentence, or parts of both.
Line = str | Cite | tuple[Part, ...]
Answer = str | list[Part]


def text_of(line: Line) -> str:
    """Return the text of a line or part, citations aside."""
    return "".join(p if isinstance(p, str) else p.text for p in parts_of(line))


def parts_of(line: Line) -> tuple[Part, ...]:
    """Return a line as its parts."""
    return line if isinstance(line, tuple) else (line,)


def plain(answer: Answer) -> str:
    """Return an answer's text without its citations."""
    return answer if isinstance(answer, str) else "".join(text_of(p) for p in answer)


class SearchResults:
    """The search_result blocks of one request, numbered as the API numbers them."""

    def __init__(self, messages: list[dict[str, Any]]) -> None:
        self._found: dict[str, tuple[int, dict[str, Any]]] = {}
        for index, block in enumerate(_search_results(messages)):
            # A later result wins: the current turn's, when a call was made again.
            self._found[str(block.get("source"))] = (index, block)
            self._found[str(block.get("title"))] = (index, block)

    def citations(self, refs: Iterable[str]) -> list[dict[str, Any]] | None:
        """Return one citation per ref, or None when any of them is not in the request."""
        out = []
        for ref in dict.fromkeys(refs):
            found = self._found.get(ref)
            if found is None:
                return None
            index, block = found
            content = block.get("content") or []
            out.append(
                {
                    "type": "search_result_location",
                    "source": block.get("source"),
                    "title": block.get("title"),
                    "cited_text": "".join(str(c.get("text", "")) for c in content),
                    "search_result_index": index,
                    "start_block_index": 0,
                    "end_block_index": len(content),
                }
            )
        return out or None


def text_blocks(answer: Answer, found: SearchResults) -> list[dict[str, Any]]:
    """Return the answer as text blocks: each cited sentence alone, with its citations.

    A block never holds only whitespace (the API refuses those): a blank stretch between
    two cited sentences ends the first.
    """
    blocks: list[dict[str, Any]] = []
    pending = ""  # plain text not yet placed
    for part in [answer] if isinstance(answer, str) else answer:
        if not isinstance(part, Cite) or (citations := found.citations(part.refs)) is None:
            pending += text_of(part)
            continue
        if pending.strip():
            blocks.append({"type": "text", "text": pending})
        elif pending and blocks:
            blocks[-1]["text"] += pending
        else:
            part = Cite(pending + part.text, part.refs)
        pending = ""
        blocks.append({"type": "text", "text": part.text, "citations": citations})
    if pending.strip() or not blocks:
        blocks.append({"type": "text", "text": pending})
    elif pending:
        blocks[-1]["text"] += pending
    return blocks


def _search_results(messages: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Yield the request's search_result blocks in order: in messages and in tool results."""
    for message in messages:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "search_result":
                yield block
            elif block.get("type") == "tool_result" and isinstance(block.get("content"), list):
                yield from (
                    b
                    for b in block["content"]
                    if isinstance(b, dict) and b.get("type") == "search_result"
                )
