"""No file of ours over 500 lines: code, tests, style sheets and pages (vendored files aside)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 500
KINDS = (".py", ".js", ".mjs", ".css", ".html")
VENDORED = ("web/vendor/",)


def tracked() -> list[str]:
    """The files git tracks (a clone's files: no virtualenv, node_modules or screenshots)."""
    try:
        listed = subprocess.run(
            ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [name for name in listed.splitlines() if name.endswith(KINDS)]


def too_long(names: list[str], root: Path = ROOT) -> list[str]:
    found = []
    for name in names:
        path = root / name
        if name.startswith(VENDORED) or not path.is_file():
            continue
        lines = len(path.read_text(encoding="utf-8", errors="replace").splitlines())
        if lines > MAX_LINES:
            found.append(f"{name}: {lines} lines")
    return found


def test_no_file_of_ours_is_over_500_lines() -> None:
    names = tracked()
    assert any(name.endswith(".css") for name in names) and "app.py" in names
    assert too_long(names) == [], "split it by concept"


def test_the_check_sees_a_long_file(tmp_path: Path) -> None:
    (tmp_path / "web" / "vendor").mkdir(parents=True)
    for name, lines in (("long.css", 501), ("short.py", 500), ("web/vendor/lib.js", 900)):
        (tmp_path / name).write_text("x\n" * lines)
    names = ["long.css", "short.py", "web/vendor/lib.js", "gone.js"]
    assert too_long(names, tmp_path) == ["long.css: 501 lines"]
