"""The same file uploaded again, under another name and with another account picked (or
none), goes to the accounts it went to before, every readable row a duplicate: in every
format, from the samples, the banks' layouts and the shared corpus of real files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.imports.conftest import SAMPLES, Importer
from tests.imports.real_files import SHARED, files, held
from tests.imports.test_layouts import EXPECTED, LAYOUT_FILES

pytestmark = pytest.mark.shared_app

UNKNOWN = json.dumps({"date": "Posted", "payee": "What", "amount": "Value"})


def _cases() -> list[tuple[Path, dict[str, str]]]:
    found: list[tuple[Path, dict[str, str]]] = []
    for path in sorted(SAMPLES.iterdir()):
        if path.suffix == ".json":
            continue
        form = {"currency": "EUR"}
        if path.name == "unknown_columns.tsv":
            form["mapping"] = UNKNOWN
        found.append((path, form))
    for name, expected in sorted(EXPECTED.items()):
        found.append((LAYOUT_FILES / name, {"currency": expected.currency}))
    if SHARED.is_dir():
        found += [(path, {"currency": "EUR"}) for path in files() if held(path).rows]
    return found


def _id(case: Any) -> str:
    return case.name if isinstance(case, Path) else ""


@pytest.mark.parametrize(("path", "form"), _cases(), ids=_id)
def test_the_same_file_again_goes_where_it_went_all_duplicates(
    importer: Importer, path: Path, form: dict[str, str]
) -> None:
    data = path.read_bytes()
    first = importer.upload(path.name, data, **form)
    assert first.status_code == 201, first.json
    assert first.json["same_file_as"] is None
    committed = importer.commit(first.json["id"]).json
    went = [a["account_id"] for a in committed["accounts"]]
    added = committed["added"]
    valid = committed["counts"]["total"] - committed["counts"]["invalid"]
    before = importer.get("/api/transactions?limit=1").json["count"]

    # Another account picked, in the file's currency, and another name: it goes where it went.
    currency = committed["accounts"][0]["currency"]
    other = importer.client.post(
        "/api/accounts",
        json={"name": "Somewhere else", "kind": "checking", "currency": currency},
        headers=importer.headers,
    )
    assert other.status_code == 201, other.json
    earlier = [first.json["id"]]
    picks = [{"account_id": other.json["id"]}] + ([{}] if path.parent == SAMPLES else [])
    for pick in picks:
        again = importer.upload(f"renamed-{path.name}", data, **{**form, **pick})
        assert again.status_code == 201, again.json
        record = again.json
        assert record["same_file_as"] == earlier[-1]
        earlier.append(record["id"])
        assert [a["account_id"] for a in record["accounts"]] == went
        counts = record["counts"]
        assert counts["duplicate"] == valid, counts
        assert counts["new"] == counts["possible_duplicate"] == counts["included"] == 0
        assert importer.commit(record["id"]).json["added"] == 0
    assert (
        added
        == valid - committed["counts"]["duplicate"] - committed["counts"]["possible_duplicate"]
    )
    assert importer.get("/api/transactions?limit=1").json["count"] == before


def test_a_draft_of_a_file_committed_since_goes_where_that_one_went(importer: Importer) -> None:
    data = (SAMPLES / "german.csv").read_bytes()
    first = importer.upload("german.csv", data, currency="EUR").json
    second = importer.upload("copy.csv", data, currency="EUR").json
    assert second["counts"]["new"] == first["counts"]["new"]  # nothing was committed yet
    added = importer.commit(first["id"]).json["added"]
    assert added > 0
    stale = importer.commit(second["id"]).json
    assert stale["added"] == 0
    assert [a["account_id"] for a in stale["accounts"]] == [
        a["account_id"] for a in importer.get(f"/api/imports/{first['id']}").json["accounts"]
    ]
    accounts = importer.get("/api/accounts").json["accounts"]
    assert len(accounts) == 1  # no second "Imported account"
