"""Write the demo model's final answer from the tool results it received."""

from __future__ import annotations

from typing import Any

from demo_model.plans import Plan, Results

MAX_ROWS = 8


def compose_answer(plan: Plan, results: Results) -> str:
    """Return a short answer quoting the exact figures the tools returned."""
    errors = [
        f"- {name}: {r['error']}" for name, _, r in results if isinstance(r, dict) and "error" in r
    ]
    if errors:
        return "I could not get all of the data I needed:\n" + "\n".join(errors)
    if not results:
        if plan.category:
            return (
                f"I found no spending in a category like '{plan.category}' for {plan.period.label}."
            )
        return "I found nothing to report for that question."
    intro = {
        "category": f"Here is your {plan.category} spending for {plan.period.label}:",
        "budget": f"Here is your budget status for {plan.period.label}:",
        "compare": "Here is how this month compares with last month:",
        "recurring": "These look like recurring payments:",
        "balances": "Here are your account balances:",
        "overview": f"Here is an overview for {plan.period.label}:",
    }[plan.kind]
    body = "\n".join(render(name, result) for name, _, result in results)
    return f"{intro}\n\n{body}"


def render(name: str, result: Any) -> str:
    """Render one tool result as Markdown bullet lines."""
    lines = [f"**{name.replace('_', ' ')}**"]
    if not isinstance(result, dict):
        return "\n".join([*lines, f"- {result}"])
    for key, value in result.items():
        if isinstance(value, list):
            rows = [v for v in value if isinstance(v, dict)][:MAX_ROWS]
            lines += [f"- {_row(row)}" for row in rows]
            if len(value) > MAX_ROWS:
                lines.append(f"- ... and {len(value) - MAX_ROWS} more")
        elif isinstance(value, dict):
            lines.append(f"- {key}: {_row(value)}")
        elif value not in (None, "", False):
            lines.append(f"- {key}: {value}")
    return "\n".join(lines)


def _row(row: dict[str, Any]) -> str:
    parts = []
    for key, value in row.items():
        if isinstance(value, dict | list) or value in (None, ""):
            continue
        parts.append(f"{key} {value}")
    return ", ".join(parts)
