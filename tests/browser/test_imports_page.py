"""Statement import on the page: upload, review, exclude a row, commit, history, undo, mapping."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from tests.browser.page import ChatPage

pytestmark = pytest.mark.browser

SAMPLES = Path(__file__).parents[1] / "imports" / "samples"
# Recognised columns, and a payee that is markup: it must show as text.
MARKUP_CSV = (
    "Date,Amount,Payee\n"
    "2026-03-06,-42.50,Blue Heron Bakery\n"  # the OFX's row of 2026-03-05, without its bank id
    "2026-03-04,-1.00,<img src=x onerror=alert(1)>Gull Books\n"
)

DROP = """
const [name, text] = arguments;
const data = new DataTransfer();
data.items.add(new File([text], name, {type: 'text/plain'}));
const drop = new DragEvent('drop', {dataTransfer: data, bubbles: true, cancelable: true});
document.body.dispatchEvent(drop);
"""

ROWS = """
return [...document.querySelectorAll('#import-draft .import-rows tbody tr')].map((tr) => ({
  id: tr.dataset.rowId, status: tr.dataset.status, excluded: tr.classList.contains('excluded'),
  text: tr.querySelector('.row-text').textContent, checked: tr.querySelector('input').checked,
  why: tr.querySelector('.status-cell').textContent}));
"""

ERROR = "return document.getElementById('import-error').textContent"

TITLE = "return document.getElementById('import-draft-title')?.textContent"
NOTE = "return document.getElementById('import-note').textContent"

FITS = """
const d = document.getElementById('imports');
const r = d.getBoundingClientRect();
return {open: d.open, overflowX: d.scrollWidth - d.clientWidth,
  inside: r.left >= 0 && r.right <= innerWidth + 0.5
    && r.top >= 0 && r.bottom <= innerHeight + 0.5};
"""


def open_imports(page: ChatPage, size: str) -> None:
    if size == "phone":
        page.click("#menu")
        page.wait(lambda: page.visible("#import"), what="the chat list")
    page.click("#import")
    page.wait(lambda: page.visible("#import-file"), what="the import dialog")


def rows(page: ChatPage, count: int) -> list[dict[str, Any]]:
    return page.wait(
        lambda: (
            page.js("return !document.getElementById('import-draft').hidden")
            and len(shown := page.js(ROWS)) == count
            and shown
        ),
        what=f"{count} rows of the draft (error: {page.js(ERROR)!r})",
    )


def state(page: ChatPage) -> str:
    """What the shown import is: Draft, Committed or Undone, and its format."""
    text: str = page.js("return document.getElementById('import-state')?.textContent || ''")
    return text


def latest(server: Any) -> dict[str, Any]:
    imports: list[dict[str, Any]] = server.get("/api/imports").json()["imports"]
    return imports[0]


def check_fits(page: ChatPage) -> None:
    fits = page.js(FITS)
    assert fits == {"open": True, "overflowX": 0, "inside": True}


def test_the_import_opened_signed_out_asks_to_sign_in(serve: Any, page: ChatPage) -> None:
    server = serve()
    page.open(server.url)  # no token
    open_imports(page, "laptop")
    error = page.wait(lambda: page.js(ERROR), what="the import's error")
    assert error.startswith("Sign in first")
    assert server.get("/api/imports").json()["imports"] == []


@pytest.mark.parametrize(("size", "scheme"), [("laptop", "light"), ("phone", "dark")])
def test_a_statement_is_reviewed_committed_and_undone_on_the_page(
    serve: Any, page: ChatPage, size: str, scheme: str
) -> None:
    server = serve()
    page.size(size)
    page.color_scheme(scheme)
    page.open(f"{server.url}/#token={server.headers['Authorization'][7:]}")
    open_imports(page, size)

    # An OFX file with two accounts: every row new, both statements balance.
    page.driver.find_element("id", "import-file").send_keys(str(SAMPLES / "multi_account.ofx"))
    page.click("#import-upload button[type=submit]")
    shown = rows(page, 4)
    assert [r["status"] for r in shown] == ["new"] * 4 and all(r["checked"] for r in shown)
    assert "Streamflix" in shown[1]["text"]
    recon = page.js(
        "return [...document.querySelectorAll('.import-recon li')].map((l) => l.textContent)"
    )
    assert len(recon) == 2 and all("Balances" in line for line in recon)
    check_fits(page)
    page.screenshot(f"import-draft-{size}-{scheme}")

    # Exclude a row: the page says so and the draft keeps it out.
    draft = latest(server)
    page.click(f"#import-draft tr[data-row-id='{shown[1]['id']}'] input")
    page.wait(lambda: page.js(ROWS)[1]["excluded"], what="the row to be excluded")
    stored = server.get(f"/api/imports/{draft['id']}/rows").json()["rows"]
    assert [r["include"] for r in stored] == [True, False, True, True]

    # A category typed for a row is kept on the draft.
    category = page.driver.find_element(
        "css selector", f"#import-draft tr[data-row-id='{shown[0]['id']}'] .row-category"
    )
    category.send_keys("Bakery", Keys.TAB)
    page.wait(
        lambda: (
            server.get(f"/api/imports/{draft['id']}/rows").json()["rows"][0]["category"] == "Bakery"
        ),
        what="the category saved",
    )

    # Commit: three transactions added, the import shows as committed and in the history.
    page.click("#import-commit")
    page.wait(
        lambda: state(page).startswith("Committed"),
        what="the commit",
    )
    page.wait(lambda: page.js(NOTE) == "Added 3 transactions.", what="the note")
    committed = latest(server)
    assert committed["status"] == "committed"
    assert page.visible("#import-undo")
    assert not page.js("return !!document.getElementById('import-commit')")
    page.click("#import-back")
    page.wait(
        lambda: page.js(
            "return document.querySelector('#import-history li')?.dataset.status === 'committed'"
        ),
        what="the history",
    )
    assert "multi_account.ofx" in page.js(
        "return document.getElementById('import-history').textContent"
    )

    # A dropped TSV whose columns are not recognised asks which is which, then reads.
    page.js(DROP, "unknown_columns.tsv", (SAMPLES / "unknown_columns.tsv").read_text())
    page.wait(lambda: page.visible("#import-mapping select"), what="the mapping form")
    assert "not recognised" in page.js("return document.getElementById('import-error').textContent")
    for role, column in {"date": "Posted", "payee": "What", "amount": "Value"}.items():
        Select(page.driver.find_element("id", f"map-{role}")).select_by_value(column)
    page.screenshot(f"import-mapping-{size}-{scheme}")
    page.click("#import-mapping button[type=submit]")
    # The file does not state its currency: the page says so, and the file is sent again with one.
    page.wait(lambda: "currency" in page.js(ERROR), what="the missing currency")
    page.driver.find_element("id", "import-currency").send_keys("eur")
    page.click("#import-mapping button[type=submit]")
    mapped = rows(page, 2)
    assert "Kite Shop" in mapped[0]["text"] and "River Cafe" in mapped[1]["text"]
    page.click("#import-discard")
    assert "dropped" in page.confirm_text()
    page.click("#confirm-ok")
    page.wait(lambda: page.visible("#import-file"), what="the upload form again")
    names = [i["filename"] for i in server.get("/api/imports").json()["imports"]]
    assert "unknown_columns.tsv" not in names

    # A CSV into the OFX's checking account: its copy of a row is a possible duplicate shown
    # beside the row it matches, and a file's values are text, never markup.
    checking = committed["accounts"][0]["account_id"]
    Select(page.driver.find_element("id", "import-account")).select_by_value(str(checking))
    page.js(DROP, "markup.csv", MARKUP_CSV)
    markup = rows(page, 2)
    assert [r["status"] for r in markup] == ["possible_duplicate", "new"]
    assert not markup[0]["checked"] and markup[1]["checked"]
    assert "Matches: 2026-03-05" in markup[0]["why"] and "Blue Heron Bakery" in markup[0]["why"]
    assert markup[1]["text"].startswith("<img src=x onerror=alert(1)>Gull Books")
    Select(page.driver.find_element("id", "import-filter")).select_by_value("possible_duplicate")
    assert [r["status"] for r in rows(page, 1)] == ["possible_duplicate"]
    assert page.js("return document.querySelector('#import-draft img')") is None
    check_fits(page)
    page.screenshot(f"import-duplicate-{size}-{scheme}")
    page.click("#import-back")

    # Undo the committed import from the history: exactly its rows go.
    page.wait(
        lambda: page.js(
            "const li = document.querySelector('#import-history li');"
            "return li?.textContent.includes('markup.csv')"
            " && document.querySelector('#import-history li[data-status=committed] button')"
        ),
        what="the history with the latest draft",
    ).click()
    rows(page, 4)
    page.click("#import-undo")
    assert "Exactly the transactions" in page.confirm_text()
    page.click("#confirm-ok")
    page.wait(
        lambda: state(page).startswith("Undone"),
        what="the undo",
    )
    page.wait(lambda: page.js(NOTE) == "Removed 3 transactions.", what="the note")
    assert server.get(f"/api/imports/{draft['id']}").json()["status"] == "undone"
    check_fits(page)
    page.screenshot(f"import-undone-{size}-{scheme}")
    # The two refused uploads (mapping, then currency) are the only errors logged.
    assert [e for e in page.console_errors() if " 422 " not in e] == []


def test_the_import_works_from_the_keyboard_and_pages_long_drafts(
    serve: Any, page: ChatPage
) -> None:
    server = serve()
    page.size("laptop")
    page.open(f"{server.url}/#token={server.headers['Authorization'][7:]}")
    page.js("document.getElementById('import').focus()")
    page.driver.switch_to.active_element.send_keys(Keys.ENTER)
    page.wait(lambda: page.js("return document.activeElement.id") == "import-file", what="focus")
    page.driver.find_element("id", "import-currency").send_keys("EUR")
    lines = [f"2026-02-{1 + n % 28:02d},-{n + 1}.00,Shop {n}" for n in range(60)]
    page.js(DROP, "long.csv", "Date,Amount,Payee\n" + "\n".join(lines) + "\n")
    rows(page, 50)  # the first page
    more = page.driver.find_element("css selector", "#import-draft .rows-more")
    more.send_keys(Keys.ENTER)
    shown = rows(page, 60)
    assert [r["text"] for r in shown] == [f"Shop {n}" for n in range(60)]
    assert not page.visible("#import-draft .rows-more")

    box = page.driver.find_element("css selector", f"tr[data-row-id='{shown[0]['id']}'] input")
    box.send_keys(Keys.SPACE)
    page.wait(lambda: page.js(ROWS)[0]["excluded"], what="the row excluded by keyboard")
    draft = latest(server)
    assert draft["counts"]["included"] == 59

    page.driver.switch_to.active_element.send_keys(Keys.ESCAPE)
    page.wait(lambda: not page.js("return document.getElementById('imports').open"), what="close")
    assert page.js("return document.activeElement.id") == "import"


EXPECTED = json.loads((SAMPLES / "expected.json").read_text())
MINUS = "\N{MINUS SIGN}"  # how the page writes money out
FIELDS = {
    "currency": "import-currency",
    "account_name": "import-account-name",
    "locale": "import-locale",
}


@pytest.mark.parametrize("size", ["laptop", "phone"])
def test_every_sample_format_is_reviewed_and_committed_on_the_page(
    serve: Any, page: ChatPage, size: str
) -> None:
    server = serve()
    page.size(size)
    page.open(f"{server.url}/#token={server.headers['Authorization'][7:]}")
    open_imports(page, size)
    for name, expected in EXPECTED.items():
        for field, element in FIELDS.items():
            box = page.driver.find_element("id", element)
            box.clear()
            box.send_keys(expected["form"].get(field, ""))
        page.driver.find_element("id", "import-file").send_keys(str(SAMPLES / name))
        page.click("#import-upload button[type=submit]")
        page.wait(lambda n=name: state(page).startswith("Draft") and page.js(TITLE) == n, what=name)
        shown = rows(page, len(expected["rows"]))
        for row, want in zip(shown, expected["rows"], strict=True):
            assert row["status"] == "new" and want["merchant"] in row["text"], (name, row)
        recon = page.js(
            "return [...document.querySelectorAll('.import-recon li')].map((l) => l.textContent)"
        )
        assert len(recon) == len(expected["reconciliation"]), (name, recon)
        for line, want in zip(recon, expected["reconciliation"], strict=True):
            if want is None:
                assert "states no balance" in line, (name, line)
            elif want["difference"] == "0.00":
                assert "Balances" in line, (name, line)
            else:
                assert f"differs by {MINUS}{want['difference'].lstrip('-')}" in line, (name, line)
        check_fits(page)
        page.screenshot(f"import-{name}-{size}")
        page.click("#import-commit")
        page.wait(lambda: state(page).startswith("Committed"), what=f"{name} committed")
        page.click("#import-back")
        page.wait(lambda: page.visible("#import-file"), what="the upload form")
    statuses = [i["status"] for i in server.get("/api/imports").json()["imports"]]
    assert statuses == ["committed"] * len(EXPECTED)
