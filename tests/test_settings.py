"""config.Settings: one typed object of every setting, its docs, and who may read what."""

from __future__ import annotations

import ast
import re
from dataclasses import Field, fields
from pathlib import Path
from typing import Any

import pytest

from config import (
    READ_ELSEWHERE,
    TIMING_ENV,
    SettingError,
    Settings,
    Timings,
    load_settings,
    with_instance,
)

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "configuration.md"
# The project's own code: everything but the tests, the migrations' history and node packages.
SKIP = ("tests", "migrations/versions", ".venv", "node_modules", "instance")


def project_modules(*, tests: bool = False) -> list[Path]:
    """Every Python file of the project (and of its tests, if asked)."""
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        skipped = [s for s in SKIP if not (tests and s == "tests")]
        if not any(rel == s or rel.startswith(s + "/") or f"/{s}/" in rel for s in skipped):
            found.append(path)
    return found


def env_fields() -> list[Field[Any]]:
    return [f for f in fields(Settings) if f.metadata["env"]]


def default_of(f: Field[Any]) -> Any:
    return f.default_factory() if callable(f.default_factory) else f.default


def shown(f: Field[Any]) -> str:
    """How the docs write a field's default."""
    if f.metadata["shown"]:
        return str(f.metadata["shown"])
    return plain(default_of(f))


def plain(value: Any) -> str:
    if isinstance(value, bool):
        return "`on`" if value else "`off`"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, int):
        return str(value)
    return f"`{value}`"


def tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """Every Markdown table of `text` as (header cells, rows of cells)."""
    found: list[tuple[list[str], list[list[str]]]] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("| ") and i + 1 < len(lines) and lines[i + 1].startswith("| ---"):
            rows = []
            for row in lines[i + 2 :]:
                if not row.startswith("|"):
                    break
                rows.append(cells(row))
            found.append((cells(line), rows))
    return found


def cells(row: str) -> list[str]:
    # A `\|` inside a cell is a pipe of its text, not a border.
    return [c.strip() for c in re.split(r"(?<!\\)\|", row.strip().strip("|"))]


def documented(text: str) -> dict[str, str | None]:
    """Each variable the variable tables of `text` name, with the default they give (if any)."""
    found: dict[str, str | None] = {}
    for header, rows in tables(text):
        if header[0] != "variable":
            continue
        for row in rows:
            for name in re.findall(r"`([A-Z][A-Z0-9_]*)`", row[0]):
                found[name] = row[1] if header[1] == "default" else None
    return found


# Defaults.


def test_every_field_has_a_variable_or_a_key_a_parser_and_a_one_line_description() -> None:
    keys = [f.metadata["key"] for f in fields(Settings)]
    assert len(keys) == len(set(keys)) and all(keys)
    for f in fields(Settings):
        doc = f.metadata["doc"]
        assert doc and "\n" not in doc, f.name
        assert callable(f.metadata["parse"]), f.name
        assert f.metadata["env"] in (None, f.metadata["key"]), f.name


def test_an_empty_environment_gives_the_defaults(tmp_path: Path) -> None:
    settings = Settings.from_env({"INSTANCE_PATH": str(tmp_path)})
    assert settings.max_tool_rounds == 10 and settings.busy_policy == "queue"
    assert settings.database_url == f"sqlite:///{tmp_path / 'chat.db'}"
    assert settings.event_spool_dir == str(tmp_path / "spool")
    assert settings.rate_limit_storage_url == "memory://"
    assert settings.timings == Timings() and settings.tracing is False
    assert settings.anthropic_api_key is None and settings.cors_origins == ()
    assert Settings.from_env({"ANTHROPIC_API_KEY": "  ", "MAX_TOKENS": ""}).max_tokens == 4096


def test_values_are_parsed_to_their_types() -> None:
    settings = Settings.from_env(
        {
            "MAX_TOKENS": " 100 ",
            "DEMO_EVENT_DELAY": "0.25",
            "TOOL_EAGER_INPUT": "off",
            "CORS_ORIGINS": "https://a.example, http://b.example,",
            "MODEL_PRICES": '{"m": {"input": 1}}',
            "BUSY_POLICY": "Reject",
        }
    )
    assert settings.max_tokens == 100 and settings.demo_event_delay == 0.25
    assert settings.tool_eager_input is False and settings.busy_policy == "reject"
    assert settings.cors_origins == ("https://a.example", "http://b.example")
    assert settings.model_prices == {"m": {"input": 1}}


@pytest.mark.parametrize(
    ("name", "value", "problem"),
    [
        ("MAX_TOKENS", "many", "must be a whole number"),
        ("DEMO_EVENT_DELAY", "soon", "must be a number"),
        ("PROMPT_CACHE", "2h", "must be one of off, 5m, 1h"),
        ("TOOL_EAGER_INPUT", "maybe", "must be one of on, off"),
        ("MODEL_PRICES", "[1]", "must be a JSON object, got list"),
        ("STALL_TIMEOUT", "long", "must be a number"),
        ("TIME_SCALE", "x", "must be a number"),
        ("EVENTS_TOKEN_MAX_AGE", "1h", "must be a number"),
    ],
)
def test_a_value_that_cannot_be_parsed_stops_the_start_naming_its_variable(
    name: str, value: str, problem: str
) -> None:
    with pytest.raises(SettingError, match=f"^{name} {problem}"):
        Settings.from_env({name: value})


# Overrides, as tests and create_app() give them.


def test_overrides_go_by_variable_and_take_typed_values() -> None:
    settings = Settings.from_env(
        {"MAX_TOKENS": "5"},
        {"MAX_TOKENS": 7, "CORS_ORIGINS": ["https://a.example"], "TESTING": True},
    )
    assert settings.max_tokens == 7 and settings.cors_origins == ("https://a.example",)
    assert settings.testing is True
    assert Settings.from_env({}, {"ANTHROPIC_API_KEY": None}).anthropic_api_key is None


def test_an_unknown_override_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SettingError, match="no such setting: MAX_TOOL_ROUND"):
        Settings.from_env({}, {"MAX_TOOL_ROUND": 3})
    from app import create_app

    with pytest.raises(SettingError, match="no such setting: SYSTEM_PROMPT"):
        create_app({"INSTANCE_PATH": str(tmp_path), "SYSTEM_PROMPT": "Be brief."})


def test_settings_set_only_by_code_are_never_read_from_the_environment() -> None:
    settings = Settings.from_env({"TESTING": "1", "EVENT_SPOOL_DIR": "/elsewhere"})
    assert settings.testing is False and settings.event_spool_dir != "/elsewhere"
    with pytest.raises(SettingError, match=r"^TESTING must be True or False"):
        Settings.from_env({}, {"TESTING": "yes"})


def test_load_settings_makes_the_instance_folder_and_one_secret_key_in_it(
    tmp_path: Path,
) -> None:
    instance = tmp_path / "instance"
    first = load_settings({"INSTANCE_PATH": str(instance), "SECRET_KEY": None})
    again = load_settings({"INSTANCE_PATH": str(instance), "SECRET_KEY": ""})
    assert first.secret_key and first.secret_key == again.secret_key
    assert (instance / "secret_key").read_text().strip() == first.secret_key
    given = load_settings({"INSTANCE_PATH": str(instance), "SECRET_KEY": "mine"})
    assert given.secret_key == "mine"
    elsewhere = tmp_path / "elsewhere"
    made = with_instance(Settings.from_env({"INSTANCE_PATH": str(elsewhere)}))
    assert made.secret_key == (elsewhere / "secret_key").read_text().strip()


# Durations: all in Timings, all scaled.


def test_the_events_token_lifetime_is_a_timing_scaled_with_the_others() -> None:
    assert Settings.from_env({}).timings.events_token_max_age == 3600
    scaled = Settings.from_env({"TIME_SCALE": "0.5", "EVENTS_TOKEN_MAX_AGE": "100"}).timings
    assert scaled.events_token_max_age == 50 and scaled.stall_timeout == 30
    assert TIMING_ENV["events_token_max_age"] == "EVENTS_TOKEN_MAX_AGE"


def test_the_app_reads_the_events_token_lifetime_from_its_timings(
    app_config: dict[str, Any],
) -> None:
    from app import create_app

    app = create_app({**app_config, "TIME_SCALE": 0.5})
    try:
        assert app.config["SETTINGS"].timings.events_token_max_age == 1800
        assert "EVENTS_TOKEN_MAX_AGE" not in app.config
    finally:
        app.extensions["engine"].close()
        app.extensions["db"].dispose()


def test_no_module_but_config_reads_a_default_of_timings() -> None:
    found = []
    for path in project_modules(tests=True):
        if path.parent == ROOT / "config":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "Timings"
                and not node.attr.startswith("_")
            ):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} Timings.{node.attr}")
    assert not found, "read the app's scaled Timings instead:\n" + "\n".join(found)


# Who reads settings, and how.


def test_only_config_reads_the_environment_for_a_setting() -> None:
    found = []
    for path in project_modules():
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(("config/", "bench/")):
            continue
        for node in ast.walk(ast.parse(path.read_text(), rel)):
            if isinstance(node, ast.Subscript | ast.Call):
                target = node.value if isinstance(node, ast.Subscript) else node.func
                text = ast.unparse(target)
                if text in ("os.environ", "os.environ.get", "os.getenv"):
                    key = node.slice if isinstance(node, ast.Subscript) else node.args[0]
                    name = str(key.value) if isinstance(key, ast.Constant) else ast.unparse(key)
                    if not any(
                        name == n or re.fullmatch(n.replace("*", ".*"), name)
                        for n in READ_ELSEWHERE
                    ):
                        found.append(f"{rel}:{node.lineno} {name}")
    assert not found, "read a Settings field instead:\n" + "\n".join(found)


def test_the_code_reads_no_key_of_flask_config_but_the_settings() -> None:
    found = []
    for path in project_modules():
        rel = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(path.read_text(), rel)):
            if isinstance(node, ast.Subscript) and ast.unparse(node.value).endswith(".config"):
                key = node.slice
                settings = isinstance(key, ast.Constant) and key.value == "SETTINGS"
                if not settings and not isinstance(node.ctx, ast.Store):
                    found.append(f"{rel}:{node.lineno} {ast.unparse(node)}")
            if isinstance(node, ast.Call) and ast.unparse(node.func).endswith(".config.get"):
                found.append(f"{rel}:{node.lineno} {ast.unparse(node)}")
    assert not found, "read get_settings() instead:\n" + "\n".join(found)


def imports_of(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


def first_party() -> set[str]:
    return {p.stem for p in ROOT.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()}


def test_config_imports_nothing_of_the_project_but_the_event_contract() -> None:
    # The contract is pure (no I/O, no project imports) and holds the one list of if_busy
    # values BUSY_POLICY is parsed against.
    ours = first_party()
    imported = {
        n
        for path in (ROOT / "config").glob("*.py")
        for n in imports_of(path)
        if n.split(".")[0] in ours - {"config"}
    }
    assert imported == {"streaming.wire.events"}
    assert {
        n for n in imports_of(ROOT / "streaming/wire/events.py") if n.split(".")[0] in ours
    } == set()


def test_the_engine_imports_nothing_of_the_demo_model() -> None:
    found = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in sorted((ROOT / "engine").rglob("*.py"))
        for name in imports_of(path)
        if name == "demo_model" or name.startswith("demo_model.")
    ]
    assert not found, "the app hands the engine its Upstream:\n" + "\n".join(found)


def test_the_app_picks_the_demo_model_without_a_key_and_the_api_with_one() -> None:
    from app import upstream
    from demo_model.brain import LABEL

    demo = upstream(Settings.from_env({"DEMO_EVENT_DELAY": "0.5"}))
    assert demo.model == LABEL and demo.pace is not None and demo.pace.delay == 0.5
    real = upstream(Settings.from_env({"ANTHROPIC_API_KEY": "sk-x", "ANTHROPIC_MODEL": "m"}))
    assert (real.model, real.api_key, real.pace) == ("m", "sk-x", None)


# The docs.


def test_the_docs_give_every_variable_with_its_default_and_no_other() -> None:
    docs = documented(DOCS.read_text())
    want = {f.metadata["env"]: shown(f) for f in env_fields()}
    want |= {env: plain(getattr(Timings(), name)) for name, env in TIMING_ENV.items()}
    missing = sorted(set(want) - set(docs))
    assert not missing, f"docs/configuration.md lacks {missing}"
    wrong = {name: (docs[name], want[name]) for name in want if docs[name] != want[name]}
    assert not wrong, f"(docs, Settings) defaults differ: {wrong}"
    unknown = [
        name
        for name in docs
        if name not in want
        and not any(re.fullmatch(n.replace("*", ".*"), name) for n in READ_ELSEWHERE)
    ]
    assert not unknown, f"docs/configuration.md lists variables Settings lacks: {unknown}"


def test_the_docs_give_every_timing_with_its_default_and_variable() -> None:
    [(_, rows)] = [t for t in tables(DOCS.read_text()) if t[0][0] == "field"]
    given = {row[0].strip("`"): (row[1], row[2].strip("`")) for row in rows}
    want = {
        f.name: (plain(getattr(Timings(), f.name)), TIMING_ENV.get(f.name, ""))
        for f in fields(Timings)
    }
    assert given == want


def test_the_readme_gives_the_defaults_of_the_settings_it_lists() -> None:
    readme = documented((ROOT / "README.md").read_text())
    want = {f.metadata["env"]: shown(f) for f in env_fields()}
    want |= {env: plain(getattr(Timings(), name)) for name, env in TIMING_ENV.items()}
    wrong = {n: (d, want[n]) for n, d in readme.items() if n in want and d != want[n]}
    assert not wrong, f"(README, Settings) defaults differ: {wrong}"
