"""The one table of models: what each takes, what is never sent, and prices read from it."""

from __future__ import annotations

import logging
from decimal import Decimal
from pathlib import Path

import pytest

from engine.upstream.catalog import MODELS, spec_for
from engine.upstream.shape import shape_for
from services.pricing import price_for, price_table

TODAY = ["claude-sonnet-5-5", "claude-opus-5-5", "claude-haiku-5-5", "claude-fable-5-1"]


@pytest.mark.parametrize("model", TODAY)
def test_the_models_of_today_never_get_a_refused_thinking_type(model: str) -> None:
    for thinking in ("adaptive", "between_tools"):
        for effort in ("", "low", "max"):
            body, _ = shape_for(model, thinking, effort, "updates").fields()
            assert body["thinking"]["type"] in MODELS[model].thinking
            assert "budget_tokens" not in body["thinking"]
            if body["thinking"]["type"] == "between_tools":
                assert effort in ("", "low"), "between_tools runs at low to high only"
                assert "display" not in body["thinking"]


def test_display_falls_back_to_summaries_where_a_model_has_no_updates() -> None:
    shape = shape_for("claude-haiku-5-5", "adaptive", "", "updates")
    body, betas = shape.fields()
    assert body == {"thinking": {"type": "adaptive", "display": "summarized"}} and betas == []
    assert shape.warnings
    body, betas = shape_for("claude-sonnet-5-5", "adaptive", "", "updates").fields()
    assert body["thinking"]["display"] == "updates"
    assert betas == ["thinking-display-updates-2026-08-18"]


def test_the_binding_control_goes_with_adaptive_thinking_and_its_beta() -> None:
    body, betas = shape_for("claude-sonnet-5-5", "between_tools", "low", "updates").fields(True)
    drop = {"prefix_mismatch_behavior": "drop_block"}
    assert body["thinking"] == {"type": "adaptive", "block_binding": drop}
    assert betas == ["thinking-binding-controls-2026-08-01"]


def test_an_unknown_model_gets_the_safe_defaults_and_a_warning_at_start(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    shape = shape_for("claude-next-9", "adaptive", "max", "updates")
    assert shape.fields() == ({}, [])
    assert not spec_for("claude-next-9").system_messages
    from app import create_app

    with caplog.at_level(logging.WARNING):
        app = create_app(
            {
                "INSTANCE_PATH": str(tmp_path),
                "DATABASE_URL": f"sqlite:///{tmp_path / 'x.db'}",
                "ANTHROPIC_API_KEY": "sk-x",
                "ANTHROPIC_MODEL": "claude-next-9",
            }
        )
    app.extensions["db"].dispose()
    assert any("not in the model table" in r.getMessage() for r in caplog.records)


def test_a_dated_id_takes_its_models_row() -> None:
    assert spec_for("claude-haiku-4-5-20251001").prices == MODELS["claude-haiku-4-5"].prices
    assert not spec_for("claude-haiku-4-5-preview").known


def test_prices_come_from_the_table() -> None:
    table = price_table()
    for name, row in MODELS.items():
        prices = price_for(name, table)
        assert prices is not None and prices["input"] == Decimal(str(row.prices["input"]))
    assert price_for("claude-sonnet-4-5-20250929", table) == table["sonnet"], "families stay"
