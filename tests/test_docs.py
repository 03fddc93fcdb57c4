"""The docs against the code: links resolve, named paths exist, the README lists every route."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

# One app for the module's tests, its database emptied after each (tests/conftest.py).
pytestmark = pytest.mark.shared_app

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted([ROOT / "README.md", ROOT / "CONTRIBUTING.md", *(ROOT / "docs").rglob("*.md")])
# Paths the docs name that are made at run time or by a command, never committed.
NOT_COMMITTED = ("instance/", "tests/browser/screenshots/", "tests/aisdk/node_modules")
# Flask's own static route (no `static/` folder exists; the page is served under /web/).
UNLISTED_ENDPOINTS = {"static"}
METHODS = r"GET|POST|PUT|PATCH|DELETE"
# What a dotted name in the docs may start with: the project's packages and root modules.
PACKAGES = tuple(
    p.name if p.is_dir() else p.stem
    for p in ROOT.iterdir()
    if (p / "__init__.py").is_file() or (p.suffix == ".py" and p.stem.isidentifier())
)


def top_level() -> set[str]:
    return {p.name for p in ROOT.iterdir() if not p.name.startswith(".")}


def code_spans(text: str) -> list[str]:
    """The inline code spans of a Markdown text, fenced blocks left out."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.findall(r"`([^`\n]+)`", text)


def repo_paths(text: str) -> list[str]:
    """Spans that name a file or folder of the repository (`engine/runtime.py`, `web/`)."""
    tops = top_level()
    found = []
    for span in code_spans(text):
        if " " in span or span.startswith(("/", "http")):
            continue
        head = span.split("/")[0]
        if ("/" in span and head in tops) or ("/" not in span and span in tops):
            found.append(span)
    return found


def sibling_paths(text: str) -> list[str]:
    """`dir/a.py`, `b.py` in one list: the bare names are files of the same folder."""
    found = []
    for m in re.finditer(r"`((?:\w+/)+)[\w.]+\.py`((?:,? (?:and )?`[\w.]+\.py`)+)", text):
        found += [m.group(1) + name for name in re.findall(r"`([\w.]+\.py)`", m.group(2))]
    return found


def dotted_modules(text: str) -> list[str]:
    """Spans like `streaming.wire.events.EVENT_TYPES` that start with a project package."""
    pattern = rf"^(?:{'|'.join(PACKAGES)})(?:\.\w+)+$"
    return [s for s in code_spans(text) if re.match(pattern, s) and not s.endswith(".py")]


def module_exists(dotted: str) -> bool:
    """The longest module prefix of a dotted name is a module of the repository, and the name
    after it (a class, function or constant) appears in that module."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:i])
        module = (
            base.with_suffix(".py") if base.with_suffix(".py").is_file() else base / "__init__.py"
        )
        if module.is_file():
            rest = parts[i:]
            return not rest or re.search(rf"\b{rest[0]}\b", module.read_text()) is not None
    return False


def slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = heading.strip().lower().replace("`", "")
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", path.read_text(), flags=re.S | re.M)
    return {slug(line.lstrip("#")) for line in text.splitlines() if line.startswith("#")}


def links(text: str) -> list[str]:
    return [m for m in re.findall(r"\]\(([^)\s]+)\)", text) if not re.match(r"\w+:", m)]


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@pytest.mark.parametrize("doc", DOCS, ids=rel)
def test_relative_links_resolve(doc: Path) -> None:
    broken = []
    for link in links(doc.read_text()):
        target, _, anchor = link.partition("#")
        path = (doc.parent / target).resolve() if target else doc
        if not path.exists() or (anchor and path.suffix == ".md" and anchor not in anchors(path)):
            broken.append(link)
    assert broken == [], f"{rel(doc)}: links to nothing"


@pytest.mark.parametrize("doc", DOCS, ids=rel)
def test_named_paths_exist(doc: Path) -> None:
    text = doc.read_text()
    named = repo_paths(text) + sibling_paths(text)
    missing = [
        p
        for p in named
        if not p.startswith(NOT_COMMITTED) and not (ROOT / p.split("::")[0].rstrip("/")).exists()
    ]
    missing += [m for m in dotted_modules(text) if not module_exists(m)]
    assert missing == [], f"{rel(doc)} names paths or modules that do not exist"


def readme_routes(text: str) -> set[tuple[str, str]]:
    """(method, path) of every row of the README's API table; a path alone takes the method
    before it; `<...>` placeholders and query strings are left out of the comparison."""
    section = text.split("\n## API\n", 1)[1].split("\n## ", 1)[0]
    routes = set()
    for row in section.splitlines():
        if not row.startswith("| `"):
            continue
        method = ""
        for span in re.findall(r"`([^`]+)`", row.split(" | ")[0]):
            m = re.fullmatch(rf"(?:({METHODS}) )?(/\S*)", span)
            assert m, f"not `METHOD /path` or `/path`: {span!r}"
            method = m.group(1) or method
            routes.add((method, normal(m.group(2).split("?")[0])))
    return routes


def app_routes(app: Any) -> set[tuple[str, str]]:
    """(method, path) of every rule the app registers, but HEAD and OPTIONS."""
    return {
        (method, normal(rule.rule))
        for rule in app.url_map.iter_rules()
        if rule.endpoint not in UNLISTED_ENDPOINTS
        for method in rule.methods - {"HEAD", "OPTIONS"}
    }


def normal(path: str) -> str:
    return re.sub(r"<[^>]*>", "<>", path)


def test_readme_lists_every_route(app: Any) -> None:
    listed = readme_routes((ROOT / "README.md").read_text())
    registered = app_routes(app)
    assert sorted(registered - listed) == [], "routes missing from the README's API table"
    assert sorted(listed - registered) == [], "README rows for routes the app does not have"


def test_a_missing_route_is_found(app: Any) -> None:
    text = (ROOT / "README.md").read_text()
    row = next(r for r in text.splitlines() if r.startswith("| `GET /api/actions"))
    assert ("GET", "/api/actions") in app_routes(app) - readme_routes(text.replace(row, ""))


def test_a_stale_path_is_found() -> None:
    text = "`engine/nowhere.py`, `engine/runtime.py`, `ghost.py`, `streaming.wire.nothing.X`"
    assert not module_exists("streaming.wire.events.NO_SUCH_NAME")
    assert repo_paths(text) == ["engine/nowhere.py", "engine/runtime.py"]
    assert sibling_paths(text) == ["engine/ghost.py"]
    assert [m for m in dotted_modules(text) if not module_exists(m)] == ["streaming.wire.nothing.X"]
    assert module_exists("streaming.wire.events.EVENT_TYPES")
    assert module_exists("config.Timings") and not module_exists("config.NoSuchTimings")


RECORDS = sorted((ROOT / "docs" / "decisions").glob("[0-9][0-9][0-9][0-9]-*.md"))


@pytest.mark.parametrize("record", RECORDS, ids=rel)
def test_a_decision_record_has_its_date_context_decision_consequences_and_revisit(
    record: Path,
) -> None:
    text = record.read_text()
    headings = [line[3:] for line in text.splitlines() if line.startswith("## ")]
    assert re.search(r"^- Decided: \d{4}-\d\d-\d\d", text, re.M), "no `- Decided: YYYY-MM-DD`"
    assert {"Context", "Decision", "Consequences"} <= set(headings)
    assert any(h.startswith("When") for h in headings), "no `## When ...` to revisit it"
    assert text.startswith(f"# {record.name[:4]}: ")


def test_the_decisions_index_lists_every_record() -> None:
    index = (ROOT / "docs" / "decisions" / "README.md").read_text()
    assert [r.name for r in RECORDS] == re.findall(r"\]\(([0-9]{4}-[^)]+\.md)\)", index)
