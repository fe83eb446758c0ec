"""The search page in a real browser: headless Chromium (Debian's) driven by Playwright.

Types a query, checks that KaTeX typeset the mathematics and that the expected statement is the
top result, narrows by a filter, opens the statement page and follows a dependency link.
Screenshots land in out/test-artifacts/. Chromium missing: a failure in CI (`CI` set), a skip
elsewhere.
"""
import os
import pathlib
import re

import pytest

from conftest import serve_app
from query_corpus import PAPERS_ROWS, STATEMENTS, write_corpus

CHROMIUM = pathlib.Path("/usr/bin/chromium")
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
ARTIFACTS = pathlib.Path(__file__).resolve().parents[2] / "out" / "test-artifacts"
TIMEOUT_MS = 120_000     # a loaded 2-core CI machine embeds queries slowly; a wait ends as soon as the page is ready


@pytest.fixture(scope="module")
def graph_corpus(tmp_path_factory, encoder):
    """The query corpus plus a `uses` edge: Corollary 1.5 (ratio test) uses Lemma 1.4 (geometric
    series), as its proof would by `\\ref{lem:geometric}`."""
    import pyarrow.parquet as pq

    from schemas import EDGES as edges

    root = write_corpus(tmp_path_factory.mktemp("graph-corpus"), encoder)
    ids = {label: f"{PAPERS_ROWS[paper]['paper_id']}#{i}" for i, (paper, _, _, label, _) in enumerate(STATEMENTS)}
    row = dict(paper_id=PAPERS_ROWS[0]["paper_id"], src_theorem_id=ids["cor:ratio"],
               dst_theorem_id=ids["lem:geometric"], dst_label="lem:geometric",
               dst_paper_id=PAPERS_ROWS[0]["paper_id"], relation="uses", method="ref", location="proof", count=1)
    folder = root / edges.name / "source=arxiv" / "year=2021"
    folder.mkdir(parents=True)
    pq.write_table(edges.to_arrow([{k: row.get(k) for k in edges.schema.names}]), folder / "part-00000.parquet")
    return root


@pytest.fixture(scope="module")
def page(graph_corpus):
    if not CHROMIUM.exists():
        message = f"{CHROMIUM} is missing: `apt-get install -y chromium` (.ci/run does)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    servers = serve_app(graph_corpus, mcp_host=None)
    base = next(servers)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        context = browser.new_context(base_url=base, viewport={"width": 1100, "height": 800})
        context.set_default_timeout(TIMEOUT_MS)
        offline = []
        context.route("**/*", lambda route: route.continue_() if route.request.url.startswith(base)
                      else (offline.append(route.request.url), route.abort()))
        page = context.new_page()
        page.offline_requests = offline
        yield page
        browser.close()
    next(servers, None)


def test_search_statement_page_and_dependency_link(page):
    from playwright.sync_api import expect

    page.goto("/")
    page.locator("footer").click()                         # away from the query box, then back by keyboard
    page.keyboard.press("/")
    expect(page.locator("#q")).to_be_focused()
    page.keyboard.type("the geometric series converges when the ratio is below one")
    page.keyboard.press("Enter")
    results = page.locator("#results li")
    expect(results.first).to_be_visible()
    expect(results.first.locator("a.hit-title")).to_have_text("Lemma 1.4")
    expect(results.first.locator(".paper")).to_contain_text("Sequences and series of reals")
    assert results.first.locator(".snippet .katex").count() >= 1          # $\sum_n r^n$, $|r|<1$ typeset
    assert "sum" not in results.first.locator(".snippet .katex-html").first.inner_text()
    page.screenshot(path=str(ARTIFACTS / "search-results.png"), full_page=True)

    page.locator("#filters summary").click()               # filters: definitions only
    page.select_option("#kind", "definition")
    page.locator("#search button[type=submit]").click()
    expect(page).to_have_url(re.compile(r"kind=definition"))
    expect(page.locator("#status")).to_have_text(re.compile(r"^\d+ results$"))
    kinds = page.locator("#results .kind").all_inner_texts()
    assert kinds and set(kinds) == {"definition"}
    page.screenshot(path=str(ARTIFACTS / "search-filtered.png"), full_page=True)

    page.select_option("#kind", "")
    page.fill("#q", "if the ratio of consecutive terms tends to a limit below one the series converges absolutely")
    page.keyboard.press("Enter")
    expect(results.first.locator("a.hit-title")).to_have_text("Corollary 1.5")
    results.first.locator("a.hit-title").click()           # the statement's own page
    expect(page.locator("#statement-name")).to_contain_text("Corollary 1.5")
    assert page.locator("#statement-body .katex").count() >= 1
    expect(page.locator(".proof .body")).to_contain_text("Lemma")            # the proof, its math typeset
    assert page.locator(".proof .katex").count() >= 1
    citation = page.locator("#citation").input_value()
    assert "Ada Lovelace" in citation and "Corollary 1.5" in citation
    page.screenshot(path=str(ARTIFACTS / "statement-page.png"), full_page=True)

    dependency = page.locator(".neighbours a.neighbour").first      # "Uses: Lemma 1.4"
    expect(dependency).to_have_text("Lemma 1.4")
    dependency.click()
    expect(page.locator("#statement-name")).to_contain_text("Lemma 1.4")
    expect(page.locator(".neighbours").nth(1).locator("a.neighbour")).to_have_text("Corollary 1.5")   # used by
    page.screenshot(path=str(ARTIFACTS / "dependency-page.png"), full_page=True)


def test_phone_sized_screen_and_offline(page):
    from playwright.sync_api import expect

    page.set_viewport_size({"width": 390, "height": 844})
    page.goto("/?q=a+compact+subset+of+a+Hausdorff+space+is+closed&mode=hybrid")
    expect(page.locator("#results li").first.locator("a.hit-title")).to_have_text("Proposition 2.3")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390       # nothing wider than the phone
    page.screenshot(path=str(ARTIFACTS / "search-phone.png"), full_page=True)
    assert page.offline_requests == []                     # KaTeX and fonts came from the server, no CDN
