"""The Alembic chain builds exactly the schema the models declare, and unwinds cleanly."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, inspect, text

from models import Base
from models.migrate import alembic_config, upgrade

CHAT_TABLES = {
    "users",
    "api_tokens",
    "chat_sessions",
    "turns",
    "messages",
    "tool_runs",
    "turn_events",
}
FINANCE_TABLES = {"accounts", "categories", "transactions", "budgets"}
DURABLE_TABLES = {"workers"}
UI_TABLES = {"ui_chats"}
IMPORT_TABLES = {"imports", "import_rows", "import_mappings", "category_rules", "import_slots"}
TOOL_SOURCE_TABLES = {"tool_grants", "mcp_credentials"}
CONNECTOR_TABLES = {
    "oauth_clients",
    "oauth_connections",
    "oauth_codes",
    "oauth_tokens",
    "connector_actions",
}
MONEY_RULE_TABLES = {"recurring_choices"}
ALL_TABLES = (
    CHAT_TABLES
    | FINANCE_TABLES
    | DURABLE_TABLES
    | UI_TABLES
    | IMPORT_TABLES
    | TOOL_SOURCE_TABLES
    | CONNECTOR_TABLES
    | MONEY_RULE_TABLES
)
HEAD = "0019"


def _diff(url: str) -> list[object]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return compare_metadata(MigrationContext.configure(conn), Base.metadata)
    finally:
        engine.dispose()


def _tables(url: str) -> set[str]:
    engine = create_engine(url)
    try:
        return set(inspect(engine).get_table_names()) - {"alembic_version"}
    finally:
        engine.dispose()


def _revision(url: str) -> str | None:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
    finally:
        engine.dispose()


def test_chain_is_linear() -> None:
    script = ScriptDirectory.from_config(alembic_config("sqlite://"))
    assert script.get_heads() == [HEAD]
    chain = [(r.revision, r.down_revision) for r in script.walk_revisions("base", "heads")]
    assert chain == [
        ("0019", "0018"),
        ("0018", "0017"),
        ("0017", "0016"),
        ("0016", "0015"),
        ("0015", "0014"),
        ("0014", "0013"),
        ("0013", "0012"),
        ("0012", "0011"),
        ("0011", "0010"),
        ("0010", "0009"),
        ("0009", "0008"),
        ("0008", "0007"),
        ("0007", "0006"),
        ("0006", "0005"),
        ("0005", "0004"),
        ("0004", "0003"),
        ("0003", "0002"),
        ("0002", "0001"),
        ("0001", None),
    ]


def test_head_matches_the_models(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'head.db'}"
    upgrade(url)
    assert _revision(url) == HEAD
    assert _tables(url) == ALL_TABLES
    assert _diff(url) == []


def test_step_by_step_down_to_base_and_up_again(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'steps.db'}"
    cfg = alembic_config(url)
    upgrade(url, "0001")
    assert _tables(url) == CHAT_TABLES
    upgrade(url, "0002")
    assert _tables(url) == CHAT_TABLES | FINANCE_TABLES
    upgrade(url)
    assert _tables(url) == ALL_TABLES
    command.downgrade(cfg, "0002")
    assert _tables(url) == CHAT_TABLES | FINANCE_TABLES
    command.downgrade(cfg, "0001")
    assert _revision(url) == "0001"
    assert _tables(url) == CHAT_TABLES
    command.downgrade(cfg, "base")
    assert _revision(url) is None
    assert _tables(url) == set()
    upgrade(url)
    assert _revision(url) == HEAD
    assert _diff(url) == []


def test_0010_renames_stored_denials_to_declined_and_back(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'declined.db'}"
    upgrade(url, "0009")
    engine = create_engine(url)
    insert = (
        "INSERT INTO tool_runs (session_id, tool_use_id, turn_id, name, input, result, "
        "is_error, status, approval, duration_ms, created_at) VALUES "
        "('s', :id, 't', 'set_budget', '{}', '[]', 0, 'done', :approval, 0, '2026-01-01')"
    )
    approvals = "SELECT tool_use_id, approval FROM tool_runs ORDER BY tool_use_id"
    try:
        with engine.begin() as conn:
            for row in (("a", "denied"), ("b", "approved"), ("c", None)):
                conn.execute(text(insert), {"id": row[0], "approval": row[1]})
        upgrade(url)
        with engine.connect() as conn:
            stored = [tuple(r) for r in conn.execute(text(approvals))]
        assert stored == [("a", "declined"), ("b", "approved"), ("c", None)]
        command.downgrade(alembic_config(url), "0009")
        with engine.connect() as conn:
            stored = [tuple(r) for r in conn.execute(text(approvals))]
        assert stored == [("a", "denied"), ("b", "approved"), ("c", None)]
    finally:
        engine.dispose()


def test_finance_indexes_exist(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'ix.db'}"
    upgrade(url)
    engine = create_engine(url)
    try:
        indexes = {
            ix["name"]: ix["column_names"] for ix in inspect(engine).get_indexes("transactions")
        }
    finally:
        engine.dispose()
    assert indexes["ix_transactions_user_posted"] == ["user_id", "posted_on"]
    assert indexes["ix_transactions_user_category_posted"] == [
        "user_id",
        "category_id",
        "posted_on",
    ]
    assert indexes["ix_transactions_user_merchant"] == ["user_id", "merchant"]
