"""GET /api/tools: each source's tools with what they do and whether they ask first."""

from __future__ import annotations

from typing import Any

from tools.finance import FINANCE_TOOLS


def test_built_in_tools_carry_their_description_and_whether_they_need_approval(
    client: Any, user: tuple[int, str]
) -> None:
    sources = client.get("/api/tools", headers={"Authorization": f"Bearer {user[1]}"}).json
    [built_in] = [s for s in sources["sources"] if s["kind"] == "built-in"]
    listed = {t["name"]: t for t in built_in["tools"]}
    assert set(listed) == {t.name for t in FINANCE_TOOLS}
    for tool in FINANCE_TOOLS:
        assert listed[tool.name]["description"] == tool.description
        assert listed[tool.name]["read_only"] is (not tool.side_effects)
    assert listed["set_budget"]["read_only"] is False
