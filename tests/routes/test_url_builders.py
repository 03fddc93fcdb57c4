"""The URL builders werkzeug compiles once per test process (tests/routing.py) are the ones it
would compile for each rule of each app, and build each app's URLs."""

from __future__ import annotations

from typing import Any

from flask import url_for
from werkzeug.routing.rules import Rule

from app import create_app
from tests import routing
from tests.conftest import close_app


def test_werkzeug_compiles_builders_once_per_process() -> None:
    assert Rule._compile_builder is routing._compile_once


def test_every_rule_of_an_app_gets_the_builder_werkzeug_would_compile(app: Any) -> None:
    rules = list(app.url_map.iter_rules())
    assert len(rules) > 50
    for rule in rules:
        for unknown in (False, True):
            shared = routing._compile_once(rule, unknown).__code__
            own = routing._compile(rule, unknown).__code__
            assert (shared.co_code, shared.co_consts, shared.co_varnames) == (
                own.co_code,
                own.co_consts,
                own.co_varnames,
            ), rule.rule


def test_two_apps_share_builders_and_each_builds_its_own_urls(
    app: Any, app_config: dict[str, Any]
) -> None:
    other = create_app(app_config)
    try:
        mine = {r.endpoint: r for r in app.url_map.iter_rules()}
        theirs = {r.endpoint: r for r in other.url_map.iter_rules()}
        rule, its_twin = mine["sessions.show"], theirs["sessions.show"]
        assert rule is not its_twin
        assert rule._build_unknown.__func__ is its_twin._build_unknown.__func__
        assert rule._build_unknown.__self__ is rule
        for application in (app, other):
            with application.test_request_context():
                assert url_for("health.healthz") == "/healthz"
                url = url_for("sessions.show", session_id="a b", x="1")
                assert url == "/api/sessions/a%20b?x=1"
    finally:
        close_app(other)
