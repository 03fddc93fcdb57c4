"""The HTML pages under their policies in Chromium: /docs works with nothing blocked, and no
page of the app can be framed by another site."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.page import ChatPage
from tests.browser.test_cors import Origin

FRAME_BOTH = """
const [pages, done] = arguments;
let loaded = 0;
for (const url of pages) {
  const frame = document.createElement('iframe');
  frame.src = url;
  frame.onload = () => { if (++loaded === pages.length) setTimeout(done, 300); };
  document.body.append(frame);
}
"""


@pytest.fixture
def other_site() -> Iterator[Origin]:
    site = Origin()
    yield site
    site.close()


def test_the_docs_page_runs_under_its_policy(serve: Any, page: ChatPage) -> None:
    server = serve()
    page.driver.get(f"{server.url}/docs")
    title = page.wait(
        lambda: page.js("return document.querySelector('.swagger-ui .info .title')?.textContent"),
        what="Swagger UI to render",
    )
    assert title.startswith("Chat backend")
    page.wait(lambda: page.js("return document.querySelectorAll('.opblock').length > 10"))
    page.js(
        "[...document.querySelectorAll('.opblock-summary')].find((s) => s.querySelector("
        "'.opblock-summary-path')?.textContent.replace(/\u200b/g, '') === "
        "'/api/sessions/{session_id}/export').querySelector('.opblock-summary-control').click()"
    )
    page.wait(lambda: page.js("return !!document.querySelector('.opblock-body .parameters')"))
    page.js("document.querySelector('.try-out__btn').click()")  # Try it out: its own form
    page.wait(lambda: page.js("return !!document.querySelector('.execute')"))
    page.js("document.querySelector('.opblock.is-open button[data-name=model]').click()")
    page.wait(lambda: page.js("return !!document.querySelector('.opblock.is-open .model-box')"))
    assert page.console_errors() == []  # nothing blocked by the policy


def test_no_page_can_be_framed_by_another_site(
    serve: Any, page: ChatPage, other_site: Origin
) -> None:
    server = serve()
    page.driver.get(other_site.url)
    page.console_errors()
    page.driver.execute_async_script(FRAME_BOTH, [f"{server.url}/", f"{server.url}/docs"])
    refused = [e for e in page.console_errors() if "frame" in e.lower()]
    assert len(refused) == 2, refused
    assert all("frame-ancestors 'none'" in e or "X-Frame-Options" in e for e in refused)
