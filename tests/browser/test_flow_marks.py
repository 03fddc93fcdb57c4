"""Correcting what a cited transaction counts as, from the records panel: the mark sticks."""

from __future__ import annotations

from typing import Any

from tests.browser.page import ChatPage

ROWS = """
const box = document.getElementById('sources');
return [...box.querySelectorAll('tbody tr')].map((tr) => ({
  id: tr.dataset.id,
  said: tr.querySelector('.flow-said')?.textContent,
  yours: tr.querySelector('.flow-yours') !== null,
  buttons: [...tr.querySelectorAll('.flow-fix')].map((b) => b.textContent),
  status: tr.querySelector('.flow-status')?.textContent,
  head: [...box.querySelectorAll('thead th')].map((th) => th.textContent),
  overflow: box.scrollWidth > box.clientWidth,
}));
"""


def _rows(page: ChatPage) -> list[dict[str, Any]]:
    return page.wait(lambda: (rows := page.js(ROWS)) and rows[0]["said"] and rows, what="rows")


def test_a_transaction_is_marked_a_transfer_and_given_back_to_the_rule(
    serve: Any, page: ChatPage
) -> None:
    server = serve()
    page.open(f"{server.url}/#token={server.headers['Authorization'][7:]}")
    page.ask("What did I spend on groceries last month?")
    assert page.wait_for_turn_end()["status"] == "completed"
    page.driver.find_elements("css selector", '#turns .cite[role="button"]')[0].click()
    rows = _rows(page)
    assert rows[0]["head"] == ["Date", "Merchant", "Amount"] and not rows[0]["overflow"]
    first = rows[0]
    assert (first["said"], first["yours"], first["buttons"]) == (
        "counts as spending",
        False,
        ["Mark as transfer"],
    )
    page.click(f'#sources tr[data-id="{first["id"]}"] .flow-fix')
    marked = page.wait(
        lambda: (r := _rows(page)[0]) and r["yours"] and r, what="the correction to show"
    )
    assert marked["said"] == "counts as a transfer"
    assert marked["buttons"] == ["Undo my correction"]
    assert marked["status"] == "Saved: it counts as a transfer from now on."
    stored = server.get(f"/api/transactions/{first['id']}").json()
    assert (stored["flow"], stored["flow_marked"]) == ("transfer", "transfer")
    page.screenshot("flow-mark")
    page.click(f'#sources tr[data-id="{first["id"]}"] .flow-fix')
    page.wait(lambda: not _rows(page)[0]["yours"], what="the correction to go")
    assert server.get(f"/api/transactions/{first['id']}").json()["flow"] == "spending"
    assert page.console_errors() == []
