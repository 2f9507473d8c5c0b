"""The demo in a real browser: headless Chromium (Debian's ``chromium``) driven by Playwright fills in
a conversation, ticks four metrics, clicks Score and checks that the score table shows every row,
with range and direction, and no scroll box of its own. A full-page screenshot is left in the
test's temporary folder (``--basetemp=DIR`` keeps it at ``DIR/test_*/demo.png``).

Skipped without ``chromium`` on the PATH or the ``playwright`` package (no browser download: the
system Chromium is used).
"""

import shutil

import pytest

pytest.importorskip("gradio")
sync_api = pytest.importorskip("playwright.sync_api")
CHROMIUM = shutil.which("chromium")
pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason="no chromium on the PATH")]

from test_demo import CONTEXT, REFERENCES, RESPONSE, free_port, load_app  # noqa: E402

METRICS = ("multiref", "fed", "grade", "ssrem")  # FED's 20 rows make the table long; holistic adds a minute
TABLE = "[role=grid][aria-label=Scores]"


@pytest.fixture(scope="module")
def demo_url():
    app = load_app()
    port = free_port()
    demo = app.build_demo()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    yield app, f"http://127.0.0.1:{port}/"
    demo.close()


def table_geometry(page) -> dict:
    """Rendered rows of the score table and the sizes of its scrolling viewport."""
    return page.evaluate(f"""() => {{
        const viewport = document.querySelector('{TABLE} .virtual-table-viewport');
        return {{rows: document.querySelectorAll('{TABLE} [role=row]').length,
                 scrollHeight: viewport.scrollHeight, clientHeight: viewport.clientHeight,
                 scrollWidth: viewport.scrollWidth, clientWidth: viewport.clientWidth}};
    }}""")


def test_score_table_shows_every_row_without_a_scroll_box(demo_url, tmp_path):
    app, url = demo_url
    labels = [label for label, (name, _choice) in app.CHOICES.items() if name in METRICS]
    expected, _plot, _readings = app.score_conversation("\n".join(CONTEXT + [RESPONSE]), "\n".join(REFERENCES), labels)
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(url)
            page.get_by_label("Conversation").fill("\n".join(CONTEXT + [RESPONSE]))
            page.get_by_label("Reference responses").fill("\n".join(REFERENCES))
            for label in labels:
                page.get_by_label(label).check()
            page.get_by_role("button", name="Score").click()
            page.wait_for_function(  # the scores have arrived (rendered or not)
                f"document.querySelector('{TABLE}')?.getAttribute('aria-rowcount') === '{1 + len(expected)}'",
                timeout=180_000)
            page.screenshot(path=str(tmp_path / "demo.png"), full_page=True)
            geometry = table_geometry(page)
            headers = [text.strip() for text in page.locator(f"{TABLE} [role=columnheader]").all_inner_texts()]
            rows = page.locator(f"{TABLE} [role=row]").all_inner_texts()
        finally:
            browser.close()
    assert geometry["rows"] == 1 + len(expected)  # the header and every score, all rendered
    assert geometry["scrollHeight"] <= geometry["clientHeight"]
    assert geometry["scrollWidth"] <= geometry["clientWidth"]
    assert headers == app.HEADERS
    turn_interesting = next(row for row in rows if "turn_interesting" in row)
    assert "-1000 or more (clipped at the floor -1000), raw" in turn_interesting and "higher = better" in turn_interesting


def test_the_chart_of_a_degenerate_reply_keeps_its_0_to_100_axis(demo_url, monkeypatch):
    """Every percentile 0 (a fully degenerate reply): the drawn y axis still reads 0 to 100, so the
    empty bars are not drawn on an axis collapsed to their one value (issue 54). Scores stubbed: only
    the page is checked."""
    import pandas as pd

    app, url = demo_url
    flat = pd.DataFrame([("grade: grade", 0.0), ("fed: turn_overall", 0.0)], columns=app.PLOT_COLUMNS)
    monkeypatch.setattr(app, "score_conversation", lambda *args: ([["grade", "grade", 0.0] + ["-"] * 4], flat, ""))
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(url)
            page.get_by_role("button", name="Score").click()
            page.wait_for_function("Array.from(document.querySelectorAll('.vega-embed svg text'))"
                                   ".some(t => t.textContent === 'grade: grade')", timeout=60_000)
            texts = page.evaluate("() => Array.from(document.querySelectorAll('.vega-embed svg text'), t => t.textContent)")
        finally:
            browser.close()
    assert [t for t in texts if t.isdigit()] == ["0", "20", "40", "60", "80", "100"]
