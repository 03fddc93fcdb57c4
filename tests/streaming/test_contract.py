"""The event contract has one definition: every copy of it agrees with streaming/wire/events.py."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, get_args

import pytest

from streaming.wire import protocol
from streaming.wire.events import EVENT_TYPES, PAYLOADS, EventName

# One app for the module's tests, its database emptied after each (tests/conftest.py).
pytestmark = pytest.mark.shared_app

DOCS = Path(__file__).parents[2] / "docs" / "protocol.md"


def test_the_registry_is_the_literal_of_event_names_each_with_its_payload() -> None:
    assert len(set(EVENT_TYPES)) == len(EVENT_TYPES)
    assert set(EVENT_TYPES) == set(get_args(EventName)) == set(PAYLOADS)
    assert protocol.EVENT_TYPES is EVENT_TYPES


def test_the_openapi_event_stream_schema_lists_the_registry(client: Any) -> None:
    document = client.get("/openapi.json").get_json()
    enums = [
        stream["schema"]["properties"]["event"]["enum"]
        for stream in _event_streams(document)
        if "event" in stream["schema"].get("properties", {})
    ]
    assert len(enums) >= 2  # the turn's events and the one-request chat
    assert all(enum == list(EVENT_TYPES) for enum in enums)


def _event_streams(node: Any) -> list[dict[str, Any]]:
    """Every `text/event-stream` media type object in an OpenAPI document."""
    if isinstance(node, list):
        return [found for item in node for found in _event_streams(item)]
    if not isinstance(node, dict):
        return []
    here = [node["text/event-stream"]] if "text/event-stream" in node else []
    return here + [found for value in node.values() for found in _event_streams(value)]


def test_the_page_imports_the_registry(client: Any) -> None:
    source = client.get("/web/js/protocol.js").get_data(as_text=True)
    line = next(x for x in source.splitlines() if x.startswith("export const EVENT_TYPES"))
    listed = json.loads(line.split("Object.freeze(", 1)[1].removesuffix(");"))
    assert listed == list(EVENT_TYPES)


def documented() -> dict[str, tuple[set[str], set[str]]]:
    """docs/protocol.md's table: each event's (required keys, optional keys)."""
    section = DOCS.read_text().split("## Event types", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \| `([^`]*)` \|", section, re.MULTILINE)
    out = {}
    for name, keys in rows:
        names = [k.strip() for k in keys.split(",")]
        out[name] = (
            {k for k in names if not k.endswith("?")},
            {k.removesuffix("?") for k in names if k.endswith("?")},
        )
    assert len(out) == len(rows), "each event once"
    return out


def test_the_docs_table_lists_every_event_with_the_keys_of_its_payload() -> None:
    table = documented()
    assert list(table) == list(EVENT_TYPES), "every event, in the order a turn first sends them"
    for name, (required, optional) in table.items():
        payload = PAYLOADS[name]  # type: ignore[index]
        assert required == set(payload.__required_keys__), name
        assert optional == set(payload.__optional_keys__), name


def _properties(node: Any, name: str) -> list[Any]:
    """Every schema property called `name` in an OpenAPI document (or its parameters)."""
    if isinstance(node, list):
        return [found for item in node for found in _properties(item, name)]
    if not isinstance(node, dict):
        return []
    here = [node["properties"][name]] if name in node.get("properties", {}) else []
    if node.get("name") == name and "schema" in node:
        here.append(node["schema"])
    return here + [found for value in node.values() for found in _properties(value, name)]


def test_if_busy_has_one_set_of_values_and_one_default(client: Any, monkeypatch: Any) -> None:
    from config import Settings
    from engine.turns.shared import TurnDeps
    from streaming.wire.events import BUSY_POLICIES, DEFAULT_BUSY_POLICY, BusyPolicy

    assert get_args(BusyPolicy) == BUSY_POLICIES
    document = client.get("/openapi.json").get_json()
    found = _properties(document, "if_busy")
    assert len(found) >= 3  # the turns, the one-request chat and the AI SDK route
    assert all(schema["enum"] == list(BUSY_POLICIES) for schema in found)
    assert Settings.from_env({}).busy_policy == DEFAULT_BUSY_POLICY
    assert TurnDeps.__dataclass_fields__["busy_policy"].default == DEFAULT_BUSY_POLICY
