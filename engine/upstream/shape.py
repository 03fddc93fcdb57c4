"""The model-specific fields of a request, decided once from the model's row and the settings.

`thinking` (its type, `display` and, once a conversation needs it, `block_binding`),
`output_config.effort` and the beta headers they need. Only what the model's row in the
table (engine/upstream/catalog.py) accepts is ever sent: a setting the model refuses falls
back to what it takes, with a warning at start. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.upstream.catalog import BETAS, ModelSpec, spec_for

__all__ = ["DROP_BLOCK", "Shape", "shape_for"]

# thinking.block_binding once a conversation got the documented 400 (stored with it).
DROP_BLOCK = {"prefix_mismatch_behavior": "drop_block"}


@dataclass(frozen=True)
class Shape:
    """What every request to one model carries beyond its conversation."""

    spec: ModelSpec
    # `thinking` without block_binding (None: the field is not sent).
    thinking: dict[str, Any] | None = None
    effort: str | None = None
    betas: tuple[str, ...] = ()
    warnings: tuple[str, ...] = field(default=(), compare=False)

    def fields(self, drop_blocks: bool = False) -> tuple[dict[str, Any], list[str]]:
        """The body fields and beta headers of one request (`drop_blocks`: the conversation
        sends `thinking.block_binding.prefix_mismatch_behavior: "drop_block"`)."""
        body: dict[str, Any] = {}
        betas = list(self.betas)
        thinking = self.thinking
        # A model that answered the documented 400 binds its blocks, even one not in the table.
        if drop_blocks and ("binding" in self.spec.betas or not self.spec.known):
            # The fix the docs give: adaptive thinking with the binding control, and its beta
            # (between_tools carries no block_binding; adaptive keeps the display asked for).
            base = dict(thinking or {"type": "adaptive"})
            if base.get("type") != "adaptive":
                base = {"type": "adaptive"}
            thinking = {**base, "block_binding": DROP_BLOCK}
            betas.append(BETAS["binding"])
        if thinking is not None:
            body["thinking"] = thinking
        if self.effort is not None:
            body["output_config"] = {"effort": self.effort}
        return body, betas

    @property
    def display(self) -> str | None:
        """The `thinking.display` sent, if any."""
        return None if self.thinking is None else self.thinking.get("display")


def shape_for(model: str, thinking: str, effort: str, display: str) -> Shape:
    """The shape of `model`'s requests for the THINKING, EFFORT and THINKING_DISPLAY asked."""
    spec = spec_for(model)
    warnings: list[str] = []
    if not spec.known:
        warnings.append(
            f"ANTHROPIC_MODEL {model!r} is not in the model table: no thinking, effort, display "
            "or beta is sent, and dates and tool changes go as user text"
        )
        return Shape(spec, warnings=tuple(warnings))
    if not spec.thinking:
        if effort:
            warnings.append(f"EFFORT={effort} is not sent: {model} takes no effort")
        return Shape(spec, warnings=tuple(warnings))
    kind = thinking if thinking in spec.thinking else spec.thinking[0]
    if kind != thinking:
        warnings.append(f"THINKING={thinking} is not accepted by {model}: {kind} is sent")
    if kind == "between_tools" and effort and effort not in spec.between_tools_efforts:
        warnings.append(
            f"THINKING=between_tools is refused by {model} at EFFORT={effort}: adaptive is sent"
        )
        kind = "adaptive"
    chosen_effort: str | None = None
    if effort:
        allowed = spec.between_tools_efforts if kind == "between_tools" else spec.efforts
        if effort in allowed:
            chosen_effort = effort
        else:
            warnings.append(f"EFFORT={effort} is not accepted by {model}: not sent")
    body: dict[str, Any] = {"type": kind}
    betas: list[str] = []
    if kind == "adaptive" and spec.displays:
        shown = _display(spec, display)
        if shown != display:
            warnings.append(f"THINKING_DISPLAY={display} is not accepted by {model}: {shown}")
        if shown is not None:
            body["display"] = shown
            if shown == "updates":
                betas.append(BETAS["updates"])
    return Shape(spec, body, chosen_effort, tuple(betas), tuple(warnings))


def _display(spec: ModelSpec, asked: str) -> str | None:
    """The display sent for `asked`: itself if accepted, else summaries, else none."""
    if spec.accepts_display(asked):
        return asked
    if asked == "updates" and spec.accepts_display("summarized"):
        return "summarized"
    return None
