"""The floors of the code: domain types import nothing of ours, and nothing imports upward."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Every top-level package or module of the project: an import of one of these is "ours".
OURS = {
    path.stem if path.suffix == ".py" else path.name
    for path in ROOT.iterdir()
    if (path.suffix == ".py" or (path / "__init__.py").exists()) and path.name != "tests"
}
# What each floor may import of ours. The domain types sit on the ground floor.
MAY_IMPORT: dict[str, set[str]] = {
    "domain": set(),
    "statements": {"domain"},
    # The engine runs turns: it asks nothing of the services, routes or app above it.
    "engine": {"config", "domain", "models", "streaming", "telemetry", "tools"},
    "services": {
        "config",
        "domain",
        "engine",
        "models",
        "statements",
        "streaming",
        "telemetry",
        "tools",
    },
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("floor", sorted(MAY_IMPORT))
def test_a_floor_imports_only_what_lies_below_it(floor: str) -> None:
    wrong = {
        f"{path.relative_to(ROOT)} imports {name}"
        for path in sorted((ROOT / floor).rglob("*.py"))
        for name in _imports(path) & OURS
        if name != floor and name not in MAY_IMPORT[floor]
    }
    assert not wrong, sorted(wrong)


def test_the_check_sees_an_upward_import(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("from engine.turns import turn\nimport json\n", encoding="utf-8")
    assert _imports(module) & OURS == {"engine"}


def test_money_has_iso_4217_minor_units() -> None:
    from domain.money import format_minor, minor_units

    assert [minor_units(c) for c in ("XOF", "UGX", "LYD", "HUF", "IDR", "EUR", "ZZZ")] == [
        0,
        0,
        3,
        2,
        2,
        2,
        2,
    ]
    assert format_minor(-12345, "LYD") == "-12.345"
