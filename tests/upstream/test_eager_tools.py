"""TOOL_EAGER_INPUT: every tool sent with eager_input_streaming, the same bytes every call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anthropic
import pytest

from config import Settings
from engine.upstream.client import ModelClient
from tools import default_registry

QUESTION = [{"role": "user", "content": "How much do I have?"}]


def sent_tools(app_config: dict[str, Any], **settings: Any) -> list[dict[str, Any]]:
    """The tools of a request the app's engine would send."""
    from app import create_app

    app = create_app({**app_config, **settings})
    try:
        deps = app.extensions["engine"].deps
        return deps.model.request(QUESTION, deps.tool_definitions)["tools"]
    finally:
        app.extensions["engine"].close()
        app.extensions["db"].dispose()


def test_every_tool_is_sent_eager_by_default(app_config: dict[str, Any]) -> None:
    tools = sent_tools(app_config)
    assert len(tools) == len(default_registry().definitions()) > 1
    assert all(tool["eager_input_streaming"] is True for tool in tools)


def test_no_tool_is_sent_eager_when_it_is_off(app_config: dict[str, Any]) -> None:
    tools = sent_tools(app_config, TOOL_EAGER_INPUT=False)
    assert tools and all("eager_input_streaming" not in tool for tool in tools)


def test_eager_tools_are_the_same_bytes_on_every_call() -> None:
    registry = default_registry()
    client = ModelClient(lambda: anthropic.AsyncAnthropic(api_key="x"), "m", 1024, "system")
    first = client.request(QUESTION, registry.definitions(eager=True))["tools"]
    later = [*QUESTION, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "?"}]
    second = client.request(later, registry.definitions(eager=True))["tools"]
    assert json.dumps(first) == json.dumps(second)
    assert registry.definitions(eager=True) is registry.definitions(eager=True)
    # Only the flag differs from the plain definitions.
    plain = client.request(QUESTION, registry.definitions())["tools"]
    assert [{k: v for k, v in t.items() if k != "eager_input_streaming"} for t in first] == plain


def test_the_sdk_knows_the_flag() -> None:
    assert "eager_input_streaming" in anthropic.types.ToolParam.__annotations__


@pytest.mark.parametrize(
    ("value", "eager"), [(None, True), ("off", False), ("0", False), ("ON", True), ("true", True)]
)
def test_tool_eager_input_setting(
    value: str | None, eager: bool, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    if value is None:
        monkeypatch.delenv("TOOL_EAGER_INPUT", raising=False)
    else:
        monkeypatch.setenv("TOOL_EAGER_INPUT", value)
    assert Settings.from_env().tool_eager_input is eager


def test_an_unknown_tool_eager_input_setting_stops_the_start(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TOOL_EAGER_INPUT", "maybe")
    with pytest.raises(ValueError, match="TOOL_EAGER_INPUT must be one of"):
        Settings.from_env()
