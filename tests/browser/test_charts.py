"""The chart checks on the page: each chart tool spec drawn by vega-embed at laptop and phone
sizes, light and dark, under the page's policy; bars, slices and points open their rows (by
pointer and keyboard); a table view; labels from the user's data shown as text."""

from __future__ import annotations

from typing import Any

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys

from tests.browser.page import ChatPage, result_json, shown_amount, stored_of
from tests.browser.test_answers_page import sign_in

CHART = "Show my spending by month this year as a chart"

# What the latest turn's charts show: drawn by vega-embed (its SVG), their marks, the cited
# figures among them, the colours vega used and the page's variables, and the table view.
DRAWN = """
const turn = [...document.querySelectorAll('#turns .turn')].at(-1);
if (!turn) return [];
const css = getComputedStyle(document.documentElement);
return [...turn.querySelectorAll('figure.chart')].map((c) => {
  const marks = (role) =>
    [...c.querySelectorAll(`.chart-plot svg [aria-roledescription="${role}"]`)];
  return {
    title: c.querySelector('.chart-title').textContent,
    embedded: !!c.querySelector('.chart-plot.vega-embed > svg.marks'),
    bars: marks('bar').length, arcs: marks('arc mark').length, points: marks('point').length,
    dashed: [...c.querySelectorAll('.chart-plot .mark-line path')]
      .map((p) => p.getAttribute('stroke-dasharray')),
    buttons: c.querySelectorAll('.chart-plot .cite[role="button"][tabindex="0"]').length,
    fill: (marks('bar')[0] || marks('arc mark')[0] || marks('point')[0])?.getAttribute('fill'),
    label: c.querySelector('.chart-plot .role-axis-label text')?.getAttribute('fill') ?? null,
    chart1: css.getPropertyValue('--chart-1').trim(), muted: css.getPropertyValue('--muted').trim(),
    width: c.getBoundingClientRect().width,
    svgWidth: c.querySelector('.chart-plot svg')?.getBoundingClientRect().width,
    rows: [...c.querySelectorAll('.chart-table tbody tr')].map(
      (r) => [...r.cells].map((cell) => cell.textContent)),
  };
});
"""
# The records panel's total in one currency, once it shows the figure's rows.
PANEL_TOTAL = (
    "const t = document.querySelector('#sources-body .sources-total[data-currency=\"' "
    "+ arguments[0] + '\"] td');"
    "return !document.getElementById('sources').hidden && t && t.textContent"
)
FIGURE = "[...document.querySelectorAll('#turns figure.chart .cite[role=\"button\"]')]"
BY_LABEL = f"return {FIGURE}.find((g) => g.getAttribute('aria-label').startsWith(arguments[0]))"


def asked(page: ChatPage, server: Any, question: str) -> list[dict[str, Any]]:
    """Ask; return the specs the chart tool wrote, once the page drew as many charts."""
    page.ask(question)
    shown = page.wait_for_turn_end()
    stored = stored_of(server, shown["turnId"])
    results = [result_json(r) for r in stored["results"].values()]
    specs: list[dict[str, Any]] = next(
        r["charts"] for r in results if isinstance(r, dict) and "charts" in r
    )
    page.wait(
        lambda: [d["embedded"] for d in page.js(DRAWN)] == [True] * len(specs),
        what="vega-embed to draw the charts",
    )
    return specs


def table_rows(spec: dict[str, Any]) -> list[list[str]]:
    """The table view of a one-series spec: x and the amount as the page writes it."""
    return [[v["x"], shown_amount(v["amount"], spec["currency"])] for v in spec["data"]["values"]]


# Where in a drawn figure a pointer hits it (a slice's box centre may be in the ring's hole),
# as an offset from the box's centre.
HIT = """
const [node] = arguments;
node.scrollIntoView({block: 'center'});
const r = node.getBoundingClientRect();
for (let i = 1; i < 10; i++) for (let j = 1; j < 10; j++) {
  const x = r.left + (r.width * i) / 10, y = r.top + (r.height * j) / 10;
  if (document.elementFromPoint(x, y) === node) {
    return [Math.round(x - r.left - r.width / 2), Math.round(y - r.top - r.height / 2)];
  }
}
return null;
"""


def open_records(page: ChatPage, node: Any, currency: str) -> str:
    """Click a drawn figure (a real pointer click); return the records panel's total."""
    dx, dy = page.js(HIT, node)
    ActionChains(page.driver).move_to_element_with_offset(node, dx, dy).click().perform()
    return page.wait(lambda: page.js(PANEL_TOTAL, currency), what="the figure's records")


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("size", ["laptop", "phone"])
def test_a_bar_chart_is_drawn_by_vega_embed_and_its_bars_open_their_rows(
    serve: Any, page: ChatPage, size: str, scheme: str
) -> None:
    server = serve()
    page.size(size)
    page.color_scheme(scheme)
    sign_in(page, server)
    specs = asked(page, server, CHART)
    drawn = page.js(DRAWN)
    assert [d["title"] for d in drawn] == [s["title"] for s in specs]
    for chart, spec in zip(drawn, specs, strict=True):
        values = spec["data"]["values"]
        assert chart["bars"] == len(values)
        assert chart["buttons"] == sum(1 for v in values if v["count"])
        # in the page's colours, light or dark, and as wide as the figure allows
        assert chart["fill"] == chart["chart1"] and chart["label"] == chart["muted"]
        assert chart["svgWidth"] <= chart["width"]
        assert chart["rows"] == table_rows(spec)  # the table view states every figure
    dark = page.js("return document.documentElement.dataset.theme") == "dark"
    assert dark == (scheme == "dark")
    assert page.js("return document.documentElement.scrollWidth - innerWidth") <= 0
    page.js("document.querySelector('#turns figure.chart').scrollIntoView({block: 'start'})")
    page.screenshot(f"chart-bars-{size}-{scheme}")
    # A bar opens the rows it sums, and they add up to it.
    bar = next(v for v in specs[0]["data"]["values"] if v["count"])
    node = page.js(BY_LABEL, f"{bar['x']}:")
    total = open_records(page, node, specs[0]["currency"])
    assert total == shown_amount(f"-{bar['amount']}", specs[0]["currency"])
    page.screenshot(f"chart-bars-records-{size}-{scheme}")
    assert page.console_errors() == []  # nothing refused by the page's policy, nothing failed
    page.driver.refresh()  # a stored chat draws its chart again
    page.wait(lambda: [d["rows"] for d in page.js(DRAWN)] == [d["rows"] for d in drawn])


def test_a_bar_opens_its_rows_from_the_keyboard_and_the_focus_comes_back(
    serve: Any, page: ChatPage
) -> None:
    server = serve()
    sign_in(page, server)
    spec = asked(page, server, CHART)[-1]
    first, second = [v for v in spec["data"]["values"] if v["count"]][:2]
    node = page.js(BY_LABEL, f"{first['x']}:")
    page.js("arguments[0].focus()", node)
    assert page.js("return document.activeElement === arguments[0]", node)
    ActionChains(page.driver).send_keys(Keys.ENTER).perform()
    total = page.wait(lambda: page.js(PANEL_TOTAL, spec["currency"]), what="the records")
    assert total == shown_amount(f"-{first['amount']}", spec["currency"])
    ActionChains(page.driver).send_keys(Keys.ESCAPE).perform()
    page.wait(lambda: page.js("return document.getElementById('sources').hidden"))
    assert page.js("return document.activeElement === arguments[0]", node)
    # Tab goes on to the next bar that has rows, Space opens it too
    ActionChains(page.driver).send_keys(Keys.TAB).perform()
    label = page.js("return document.activeElement.getAttribute('aria-label')")
    assert label.startswith(f"{second['x']}:") and label.endswith("Show the records.")
    ActionChains(page.driver).send_keys(Keys.SPACE).perform()
    total = page.wait(lambda: page.js(PANEL_TOTAL, spec["currency"]), what="the next records")
    assert total == shown_amount(f"-{second['amount']}", spec["currency"])
    # A laptop's window made a phone's: the charts are drawn again to the width they have
    page.size("phone")
    page.wait(
        lambda: all(d["svgWidth"] <= d["width"] < 390 for d in page.js(DRAWN)),
        what="the charts at a phone's width",
    )
    assert page.js("return document.documentElement.scrollWidth - innerWidth") <= 0


def test_the_theme_toggle_draws_the_charts_again_in_its_colours(serve: Any, page: ChatPage) -> None:
    server = serve()
    page.color_scheme("light")
    sign_in(page, server)
    asked(page, server, CHART)
    light = page.js(DRAWN)
    page.click("#theme")
    page.wait(lambda: page.js(DRAWN)[0]["chart1"] != light[0]["chart1"], what="dark variables")
    page.wait(
        lambda: all(d["fill"] == d["chart1"] and d["label"] == d["muted"] for d in page.js(DRAWN)),
        what="the charts in dark colours",
    )
    dark = page.js(DRAWN)
    assert [d["buttons"] for d in dark] == [d["buttons"] for d in light]
    assert [d["rows"] for d in dark] == [d["rows"] for d in light]
    assert page.console_errors() == []


@pytest.mark.parametrize("size", ["laptop", "phone"])
def test_a_donut_stacked_bars_and_a_projection_come_from_their_specs_alone(
    serve: Any, page: ChatPage, size: str
) -> None:
    server = serve()
    page.size(size)
    page.color_scheme("dark")
    sign_in(page, server)
    # A donut of categories: a slice per category, each opening its rows.
    (donut,) = asked(page, server, "Pie chart of my spending last month")[:1]
    (drawn,) = page.js(DRAWN)[:1]
    values = donut["data"]["values"]
    assert drawn["arcs"] == len(values) and drawn["bars"] == 0
    assert drawn["rows"] == table_rows(donut)
    page.js("document.querySelector('#turns figure.chart').scrollIntoView({block: 'start'})")
    page.screenshot(f"chart-donut-{size}")
    node = page.js(BY_LABEL, f"{values[0]['x']}:")
    total = open_records(page, node, donut["currency"])
    assert total == shown_amount(f"-{values[0]['amount']}", donut["currency"])
    page.js("document.getElementById('sources-close').click()")
    # Bars stacked by category: a segment per month and category.
    (stacked,) = asked(page, server, "Stacked chart of my spending by category")[:1]
    (drawn,) = page.js(DRAWN)[:1]
    assert drawn["bars"] == len(stacked["data"]["values"])
    assert drawn["buttons"] == sum(1 for v in stacked["data"]["values"] if v["count"])
    page.js("[...document.querySelectorAll('#turns .turn')].at(-1).scrollIntoView()")
    page.screenshot(f"chart-stacked-{size}")
    # A budget under way: spend to today solid, with points; the projection dashed, without.
    (budget,) = asked(page, server, "How is my groceries budget going, as a chart?")
    (drawn,) = page.js(DRAWN)
    rows = budget["data"]["values"]
    recorded = [v for v in rows if not v.get("projected")]
    assert drawn["points"] == len(recorded)
    assert sorted(drawn["dashed"]) == (
        ["1,0", "1,0", "6,4"] if len(recorded) < len(rows) else ["1,0", "1,0"]
    )
    assert drawn["buttons"] == sum(1 for v in recorded if v["count"])
    page.js("[...document.querySelectorAll('#turns figure.chart')].at(-1).scrollIntoView()")
    page.screenshot(f"chart-budget-{size}")
    assert page.console_errors() == []


def test_a_balance_over_time_is_a_line_of_cited_points(serve: Any, page: ChatPage) -> None:
    server = serve()
    page.size("phone")
    sign_in(page, server)
    (spec,) = asked(page, server, "My checking balance over time")
    (drawn,) = page.js(DRAWN)
    values = spec["data"]["values"]
    assert drawn["points"] == len(values) and drawn["bars"] == 0
    assert drawn["dashed"] == [None]  # one line, solid: nothing projected
    assert drawn["buttons"] == sum(1 for v in values if v["count"])
    assert page.js("return document.documentElement.scrollWidth - innerWidth") <= 0
    page.screenshot("chart-balance-phone")


HOSTILE = '<img src=x onerror="window.pwned=1"><b>Fun</b>'
LABELS = """
const figures = [...document.querySelectorAll('#turns figure.chart')];
const tip = document.querySelector('#turns .chart-tip:not([hidden])');
return {
  labels: figures.flatMap((f) => [...f.querySelectorAll('.role-axis-label text')])
    .map((t) => t.textContent),
  elements: figures.reduce(
    (n, f) => n + f.querySelectorAll('img, b, script, foreignObject').length, 0),
  pwned: window.pwned ?? null,
  tip: tip ? [tip.textContent, tip.children.length] : null,
};
"""


def test_labels_from_the_users_data_are_text_in_the_chart_and_its_tooltip(
    serve: Any, page: ChatPage, db: Any
) -> None:
    from sqlalchemy import update

    from models.finance import Category

    server = serve()
    with db.transaction() as s:
        s.execute(update(Category).where(Category.name == "Restaurants").values(name=HOSTILE))
    sign_in(page, server)
    specs = asked(page, server, "Chart my spending by category last month")
    shown = page.js(LABELS)
    assert any(HOSTILE in v["x"] for spec in specs for v in spec["data"]["values"])
    # vega's SVG text, as typed (cut short with an ellipsis where it is too long)
    cut = [label.removesuffix("\u2026") for label in shown["labels"]]
    assert any(len(label) > 10 and HOSTILE.startswith(label) for label in cut), cut
    assert shown["elements"] == 0 and shown["pwned"] is None
    node = page.js(BY_LABEL, f"{HOSTILE}:")
    dx, dy = page.js(HIT, node)
    ActionChains(page.driver).move_to_element_with_offset(node, dx, dy).perform()
    tip = page.wait(lambda: page.js(LABELS)["tip"], what="the tooltip")
    assert tip[0].startswith(f"Category: {HOSTILE}\n") and tip[1] == 0
    page.screenshot("chart-hostile-label")
    assert page.js(LABELS)["pwned"] is None and page.console_errors() == []
