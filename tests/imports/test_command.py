"""`flask import-statement`: a file imported from the shell, as a draft or committed."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.imports.conftest import SAMPLES, Importer

# One app for the module's tests, its database emptied after each (tests/conftest.py).
pytestmark = pytest.mark.shared_app


def test_a_statement_is_imported_and_committed_from_the_shell(app: Any, importer: Importer) -> None:
    runner = app.test_cli_runner()
    path = str(SAMPLES / "statement.sta")
    with app.app_context():
        done = runner.invoke(args=["import-statement", path, "--user", "alice", "--commit"])
        again = runner.invoke(args=["import-statement", path, "--user", "alice"])
    assert done.exit_code == 0, done.output
    summary = json.loads(done.output[done.output.index("{") :])
    assert summary["status"] == "committed" and summary["added"] == 3
    assert summary["accounts"][0]["reconciliation"]["balanced"] is True
    assert len(importer.transactions()) == 3

    assert json.loads(again.output[again.output.index("{") :])["counts"]["duplicate"] == 3


def test_a_file_that_fails_says_why_and_stores_nothing(app: Any, importer: Importer) -> None:
    runner = app.test_cli_runner()
    path = str(SAMPLES / "unknown_columns.tsv")
    args = ["import-statement", path, "--currency", "EUR", "--user"]
    with app.app_context():
        failed = runner.invoke(args=[*args, "alice"])
        nobody = runner.invoke(args=[*args, "nobody"])
    assert failed.exit_code != 0 and "mapping_required" in failed.output
    assert importer.get("/api/imports").json["imports"] == []
    assert nobody.exit_code != 0 and "no user 'nobody'" in nobody.output
