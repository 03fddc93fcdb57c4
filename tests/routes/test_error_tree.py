"""The error tree (domain/errors.py): one handler renders every client error in the one shape,
a new error is one subclass, and docs/api.md lists every status and code a client can get."""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from config import Timings
from domain import errors
from domain.errors import APIError, LimitExceeded, TurnStop
from server import conformance, http
from server import heads as responses

ROOT = Path(__file__).resolve().parents[2]
# Where client errors are raised: every package of the app but the host.
SOURCES = (
    "app.py",
    "routes",
    "services",
    "statements",
    "engine",
    "tools",
    "streaming",
    "telemetry",
    "models",
)
TREE = {
    name: cls
    for name, cls in vars(errors).items()
    if isinstance(cls, type) and issubclass(cls, APIError)
}
# What werkzeug answers (routing, Flask's own body limit), adapted by routes/error_handler.py.
WERKZEUG = {(405, "method_not_allowed"), (413, "request_entity_too_large")}

# One app for the module's tests, its database emptied after each (tests/conftest.py).
pytestmark = pytest.mark.shared_app


def _files(*names: str) -> Iterator[Path]:
    for name in names:
        path = ROOT / name
        yield from sorted(path.rglob("*.py")) if path.is_dir() else [path]


def _constants(module: ast.Module) -> dict[str, Any]:
    """A module's top-level constants (`A = "a"`, `A, B = "a", "b"`)."""
    found: dict[str, Any] = {}
    for node in module.body:
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            pairs = [(target, node.value)]
            if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                pairs = list(zip(target.elts, node.value.elts, strict=True))
            for name, value in pairs:
                if isinstance(name, ast.Name) and isinstance(value, ast.Constant):
                    found[name.id] = value.value
    return found


def _value(node: ast.expr | None, constants: dict[str, Any], where: str) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name) and node.id in constants:
        return constants[node.id]
    raise AssertionError(f"{where}: give a status or code as a literal or a module constant")


def raised() -> set[tuple[int, str]]:
    """(status, code) of every client error the app's code makes, read from its source."""
    found = set()
    for path in _files(*SOURCES):
        module = ast.parse(path.read_text(), str(path))
        constants = _constants(module)
        for node in ast.walk(module):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            cls = TREE.get(name or "")
            if cls is None or path == ROOT / "engine" / "errors.py":
                continue
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            if cls is LimitExceeded:
                code = _value(node.args[0] if node.args else None, constants, where)
            else:
                given = [k.value for k in node.keywords if k.arg == "code"]
                code = _value(given[0], constants, where) if given else cls.code
            found.add((cls.status, code))
    return found


def answered_by_host() -> set[tuple[int, str]]:
    """(status, code) of every answer the HTTP host makes itself, read from its source."""
    found = set()
    for source in (conformance, http, responses):
        module = ast.parse(Path(source.__file__ or "").read_text())
        for node in ast.walk(module):
            if not isinstance(node, ast.Call) or len(node.args) < 2:
                continue
            status, code = (getattr(arg, "value", None) for arg in node.args[:2])
            if isinstance(status, int) and isinstance(code, str):
                found.add((status, code))
    return found


def documented() -> tuple[set[tuple[int, str]], set[tuple[int, str]]]:
    """(status, code) rows of docs/api.md's two error tables: the host's, then the app's."""
    text = (ROOT / "docs" / "api.md").read_text()
    section = text.split("\n## Errors\n", 1)[1].split("\n## ", 1)[0]
    tables: list[set[tuple[int, str]]] = []
    rows: set[tuple[int, str]] | None = None
    for line in section.splitlines():
        if not line.startswith("|"):
            rows = None
            continue
        if rows is None:
            rows = set()
            tables.append(rows)
        cells = line.split("|")
        if re.fullmatch(r" \d{3} ", cells[1]):
            rows.update((int(cells[1]), code) for code in re.findall(r"`([a-z_]+)`", cells[2]))
    assert len(tables) == 2, "docs/api.md's errors section holds the host's and the app's table"
    return tables[0], tables[1]


def test_docs_list_every_status_and_code_a_client_can_get() -> None:
    host, app = documented()
    assert host == answered_by_host()
    assert app == raised() | WERKZEUG


def test_each_retry_timing_names_a_timing() -> None:
    named = {cls.retry_timing for cls in TREE.values()} - {None}
    assert named and named <= set(vars(Timings()))


def test_a_turn_stop_is_never_a_client_error() -> None:
    stops = [c for c in vars(errors).values() if isinstance(c, type) and issubclass(c, TurnStop)]
    assert len(stops) == 6 and not any(issubclass(c, APIError) for c in stops)


class Teapot(APIError):
    """An error added for the test: one subclass, nothing else."""

    status = 418
    code = "teapot"
    message = "I am a teapot."


RAISED = [
    (Teapot(), 418, "teapot", "I am a teapot.", {}),
    (Teapot("Short and stout.", details={"n": 1}), 418, "teapot", "Short and stout.", {"n": 1}),
    (errors.NotFound("chat"), 404, "not_found", "No such chat.", {}),
    (
        errors.Unprocessable("Pick one.", code="not_an_answer", field="messageId"),
        422,
        "not_an_answer",
        "Pick one.",
        {"messageId": ["Pick one."]},
    ),
    (
        errors.TurnConflict("s1"),
        409,
        "turn_in_progress",
        "A turn is already running on this session; wait or cancel it.",
        {},
    ),
    (errors.LimitExceeded("rate_limited", "Slow down.", 2.5, {"limit": 3}), 429, "rate_limited",
     "Slow down.", {"limit": 3, "retry_after": 3}),
    (Teapot(retry_after=0.2), 418, "teapot", "I am a teapot.", {}),
]  # fmt: skip


# The errors the test route raises, the next one last.
PENDING: list[APIError] = []


def _raise_pending() -> str:
    raise PENDING.pop()


@pytest.fixture
def raising(app: Flask) -> Iterator[list[APIError]]:
    """A route that raises the error put in the list (added once to the module's app, before
    its first request, as Flask requires)."""
    if "raise_pending" not in app.view_functions:
        app.add_url_rule("/raise", "raise_pending", _raise_pending)
    yield PENDING
    PENDING.clear()


@pytest.mark.parametrize(("error", "status", "code", "message", "details"), RAISED)
def test_the_handler_renders_any_error_of_the_tree(
    app: Flask,
    raising: list[APIError],
    error: APIError,
    status: int,
    code: str,
    message: str,
    details: dict[str, Any],
) -> None:
    raising.append(error)
    response = app.test_client().get("/raise")
    assert response.status_code == status
    assert response.get_json() == {"error": {"code": code, "message": message, "details": details}}
    wait = error.retry_after
    assert response.headers.get("Retry-After") == (None if wait is None else str(math.ceil(wait)))


@pytest.mark.parametrize(
    ("error", "timing"),
    [
        (errors.Draining(), "restart_retry_after"),
        (errors.StorageUnavailable(), "outage_retry_after"),
        (errors.ServiceUnavailable(), "busy_retry_after"),
    ],
)
def test_a_503_says_when_to_retry_from_the_scaled_timings(
    app: Flask, raising: list[APIError], error: APIError, timing: str
) -> None:
    raising.append(error)
    response = app.test_client().get("/raise")
    seconds = getattr(app.config["SETTINGS"].timings, timing)
    assert response.status_code == 503
    assert response.headers["Retry-After"] == str(max(1, math.ceil(seconds)))
    assert response.get_json()["error"]["code"] == error.code
