"""An example tools module (`TOOLS=tools.examples.savings`): a savings plan and a note.

`plan_savings` only computes; `save_note` writes, so it declares a preview and records its
result in its own write transaction (`ctx.applied`), as the finance write tools do.
"""

from __future__ import annotations

from decimal import ROUND_CEILING, Decimal
from typing import Any

from marshmallow import Schema, fields, validate

from tools.registry import Tool, ToolContext, ToolInputError

NOTES: dict[int, list[str]] = {}  # user id -> notes (an example's storage: in memory)


class PlanInput(Schema):
    """Input of plan_savings."""

    goal = fields.Decimal(
        required=True, places=2, as_string=True, validate=validate.Range(min=Decimal("0.01"))
    )
    monthly = fields.Decimal(
        required=True, places=2, as_string=True, validate=validate.Range(min=Decimal("0.01"))
    )
    saved = fields.Decimal(
        load_default=Decimal("0"), places=2, as_string=True, validate=validate.Range(min=0)
    )


class NoteInput(Schema):
    """Input of save_note."""

    text = fields.String(required=True, validate=validate.Length(min=1, max=500))


def plan_savings(ctx: ToolContext, data: dict[str, Any]) -> dict[str, Any]:
    """Months of saving `monthly` it takes to reach `goal` from `saved`."""
    goal, monthly, saved = Decimal(data["goal"]), Decimal(data["monthly"]), Decimal(data["saved"])
    if saved >= goal:
        raise ToolInputError("saved", "is already at or above the goal")
    months = ((goal - saved) / monthly).to_integral_value(ROUND_CEILING)
    return {"months": int(months), "remaining": str(goal - saved)}


def preview_note(ctx: ToolContext, data: dict[str, Any]) -> dict[str, Any]:
    """What save_note would change, for the user to approve."""
    count = len(NOTES.get(ctx.user_id, []))
    return {
        "summary": f"Save a note: {data['text']}",
        "changes": [{"field": "notes", "before": count, "after": count + 1}],
        "target": {"type": "note"},
    }


def save_note(ctx: ToolContext, data: dict[str, Any]) -> dict[str, Any]:
    """Keep a note for the user; its result is recorded with the change."""
    out = {"saved": data["text"]}
    with ctx.db.transaction() as s:
        ctx.applied(s, out)
    NOTES.setdefault(ctx.user_id, []).append(data["text"])
    return out


TOOLS = [
    Tool(
        name="plan_savings",
        description=(
            "How many months of saving a monthly amount it takes to reach a savings goal, "
            "from what is saved already. Amounts are decimal strings in one currency."
        ),
        schema=PlanInput,
        handler=plan_savings,
    ),
    Tool(
        name="save_note",
        description=(
            "Save a short note for the user. This CHANGES the user's data: it runs only after "
            "the user approves it in the chat."
        ),
        schema=NoteInput,
        handler=save_note,
        side_effects=True,
        preview=preview_note,
    ),
]
