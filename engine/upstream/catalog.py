"""What each model accepts: one table of data (thinking, effort, display, betas, window, prices).

Every request field that a model may refuse is decided from its row here
(engine/upstream/shape.py); prices are read from it by services/pricing.py. A model missing
from the table gets `UNKNOWN`'s safe defaults (nothing model-specific is sent) and a warning at
start. Facts are from Anthropic's model pages ("What's new in Claude Sonnet 5.5", "... Opus
5.5", the Haiku 5.5 overview, "Mid-conversation system messages", "Prefix checks on thinking
blocks", the thinking page's `display` section); docs/decisions/0011 keeps the wire shapes.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

__all__ = [
    "BETAS",
    "DEMO",
    "DISPLAYS",
    "EFFORTS",
    "MODELS",
    "PRICE_FAMILIES",
    "THINKING_TYPES",
    "UNKNOWN",
    "Display",
    "ModelSpec",
    "ThinkingType",
    "spec_for",
]

ThinkingType = Literal["adaptive", "between_tools"]
Display = Literal["summarized", "omitted", "updates"]
# What THINKING, EFFORT and THINKING_DISPLAY may ask for. `disabled` and `enabled` (with
# `budget_tokens`) are never sent: the models of today refuse them.
THINKING_TYPES: tuple[ThinkingType, ...] = ("adaptive", "between_tools")
EFFORTS: tuple[str, ...] = ("low", "medium", "high", "xhigh", "max")
DISPLAYS: tuple[Display, ...] = ("summarized", "omitted", "updates")

# Beta headers, by the feature that needs them.
BETAS: dict[str, str] = {
    # thinking.display "updates": progress notes between tool calls come back as text.
    "updates": "thinking-display-updates-2026-08-18",
    # thinking.block_binding and the response's input_transformations.
    "binding": "thinking-binding-controls-2026-08-01",
    # tool_addition / tool_removal blocks that name a tool by reference.
    "tool_changes": "mid-conversation-tool-changes-2026-07-01",
    # a tool_addition that defines a tool by value (`tool_definition`).
    "inline_tools": "inline-tools-2026-09-15",
}

ALL_EFFORTS = EFFORTS
# between_tools runs at these efforts only (xhigh and max need adaptive thinking).
LOW_EFFORTS = ("low", "medium", "high")


@dataclass(frozen=True)
class ModelSpec:
    """One model's row: what its requests may carry, its window and its prices."""

    name: str
    known: bool = True
    context_tokens: int = 200_000
    max_output: int = 64_000
    # US dollars per million tokens: input, output, and cache_read when it is not 0.1x.
    prices: dict[str, float] = field(default_factory=dict)
    # `thinking.type` values it accepts (the first is the default); () sends no `thinking`.
    thinking: tuple[ThinkingType, ...] = ()
    # Effort levels it accepts with adaptive thinking, and with between_tools.
    efforts: tuple[str, ...] = ()
    between_tools_efforts: tuple[str, ...] = LOW_EFFORTS
    # `thinking.display` values it accepts; () sends no display.
    displays: tuple[Display, ...] = ()
    # Features it has that need a beta header (keys of BETAS).
    betas: tuple[str, ...] = ()
    # Thinking blocks sent back are prefix-checked (preserved thinking).
    preserved: bool = False
    # `role: "system"` messages in `messages`.
    system_messages: bool = False
    # tool_addition / tool_removal blocks in those messages.
    tool_changes: bool = False
    # `tool_choice` of type `any` or `tool` (we never send one; kept for the check).
    forced_tool_choice: bool = True

    def accepts_display(self, display: str) -> bool:
        """True when `display` may be sent (with its beta, if it needs one)."""
        if display not in self.displays:
            return False
        return display != "updates" or "updates" in self.betas


def _earlier(name: str, **changes: Any) -> ModelSpec:
    """A model before preserved thinking: adaptive thinking, no binding checks, 1M window."""
    base = ModelSpec(
        name,
        context_tokens=1_000_000,
        max_output=128_000,
        thinking=("adaptive",),
        efforts=ALL_EFFORTS,
        displays=("summarized", "omitted"),
    )
    return replace(base, **changes)


def _today(name: str, **changes: Any) -> ModelSpec:
    """A model of today: preserved thinking, progress updates, system messages, tool changes,
    no forced tool use."""
    today = {
        "displays": ("summarized", "omitted", "updates"),
        "betas": ("updates", "binding", "tool_changes", "inline_tools"),
        "preserved": True,
        "system_messages": True,
        "tool_changes": True,
        "forced_tool_choice": False,
    }
    return _earlier(name, **{**today, **changes})


_ROWS = [
    _today("claude-sonnet-5-5", prices={"input": 2, "output": 10}, thinking=THINKING_TYPES),
    _today("claude-opus-5-5", prices={"input": 4, "output": 20}),
    # Haiku 5.5: summaries but no progress-update display; prices of prompts up to 100,000
    # tokens (above: 0.50 / 2.50).
    _today(
        "claude-haiku-5-5",
        prices={"input": 0.1, "output": 0.5},
        displays=("summarized", "omitted"),
        betas=("binding", "tool_changes", "inline_tools"),
    ),
    *(
        _today(name, prices={"input": 10, "output": 50, "cache_read": 0.25})
        for name in (
            "claude-fable-5-2",
            "claude-mythos-5-2",
            "claude-fable-5-1",
            "claude-mythos-5-1",
        )
    ),
    # Fable 5 and Mythos 5: progress updates and tool changes, but no binding checks.
    *(
        _earlier(
            name,
            prices={"input": 10, "output": 50, "cache_read": 1},
            displays=("summarized", "omitted", "updates"),
            betas=("updates", "tool_changes", "inline_tools"),
            system_messages=True,
            tool_changes=True,
        )
        for name in ("claude-fable-5", "claude-mythos-5")
    ),
    # Opus 5 and Opus 4.8: system messages and tool changes, thinking not bound.
    *(
        _earlier(
            name,
            prices={"input": 5, "output": 25},
            betas=("tool_changes", "inline_tools"),
            system_messages=True,
            tool_changes=True,
        )
        for name in ("claude-opus-5", "claude-opus-4-8")
    ),
    # Sonnet 5 takes no mid-conversation system messages: its notes go as user text.
    _earlier("claude-sonnet-5", prices={"input": 2, "output": 10}),
    _earlier("claude-opus-4-7", prices={"input": 5, "output": 25}),
    _earlier("claude-opus-4-6", prices={"input": 5, "output": 25}),
    _earlier("claude-sonnet-4-6", prices={"input": 3, "output": 15}),
    ModelSpec("claude-haiku-4-5", context_tokens=200_000, prices={"input": 1, "output": 5}),
]
MODELS: dict[str, ModelSpec] = {row.name: row for row in _ROWS}

# The offline demo model (demo_model/) speaks the wire format of the models of today.
DEMO = _today("offline demo model", prices={"input": 0, "output": 0})
MODELS[DEMO.name] = DEMO

# A model not in the table: nothing model-specific is sent (no `thinking`, effort, display,
# beta or system message), and its notes go as user text. A warning says so at start.
UNKNOWN = ModelSpec("unknown", known=False)

# Prices of model families and of older dated models, for names not in MODELS: a name takes
# its own row, else the longest key it contains (services/pricing.py).
PRICE_FAMILIES: dict[str, dict[str, float]] = {
    "opus": {"input": 5, "output": 25},
    "claude-opus-4-1": {"input": 15, "output": 75},
    "claude-opus-4-0": {"input": 15, "output": 75},
    "claude-opus-4-2025": {"input": 15, "output": 75},
    "claude-3-opus": {"input": 15, "output": 75},
    "sonnet": {"input": 3, "output": 15},
    "haiku": {"input": 1, "output": 5},
    "claude-3-5-haiku": {"input": 0.8, "output": 4},
    "claude-3-haiku": {"input": 0.25, "output": 1.25},
}


def spec_for(model: str) -> ModelSpec:
    """The row of `model` (its exact name or a dated version of it), else UNKNOWN."""
    found = MODELS.get(model)
    if found is not None:
        return found
    # A dated id ("claude-haiku-4-5-20251001") takes the row it extends.
    for name in sorted(MODELS, key=len, reverse=True):
        if model.startswith(name + "-") and model[len(name) + 1 :].isdigit():
            return replace(MODELS[name], name=model)
    return replace(UNKNOWN, name=model)


def prices() -> dict[str, dict[str, float]]:
    """Every priced name: the families, then each model's row (a row wins)."""
    return {
        **PRICE_FAMILIES,
        **{name: dict(row.prices) for name, row in MODELS.items() if row.prices},
    }
