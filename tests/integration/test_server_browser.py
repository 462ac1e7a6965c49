"""The web page in a real headless Chromium (Debian's chromium + chromium-driver, driven by Selenium).

Starts uvicorn on a free port against a scripted LLM, asks a question, waits for the report, clicks a citation and
checks the source panel. A screenshot goes to ``test-artifacts/web-report.png``.
"""

from __future__ import annotations

import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pytest

pytest.importorskip("fastapi", reason="the server tests need the extra `server` (pip install -e '.[server]')")
pytest.importorskip("selenium", reason="the browser test needs selenium (pip install selenium)")

from deepsearcher.settings import load_settings  # noqa: E402
from tests.integration.server_support import (  # noqa: E402
    ANSWER, FAILURE_TIMEOUT_S, QUESTION, HashEmbedder, LiveServer, responder, scripted_llm, write_corpus)

pytestmark = pytest.mark.browser

#: waits are for page events; the bound only ends a failure (a headless Chromium on a busy machine is slow)
WAIT_S = 120
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    with serve(tmp_path, scripted_llm()) as url:
        yield url


@contextmanager
def serve(tmp_path: Path, llm: Any) -> Iterator[str]:
    """The page's server over two loaded notes, answering with ``llm``; yields its URL."""
    from deepsearcher.app import DeepSearcher
    from deepsearcher.server import create_app

    allowed, _ = write_corpus(tmp_path)
    settings = load_settings(None, {"vector_db": {"uri": str(tmp_path / "milvus.db")}, "llm": None,
                                    "query": {"max_iter": 1, "agent": "deep_search"},
                                    "server": {"allowed_roots": [str(allowed)]}})
    searcher = DeepSearcher(settings, llm=llm, embedder=HashEmbedder(64, "test-hash-64"))
    searcher.load([str(allowed / "docs" / "milvus.md"), str(allowed / "docs" / "rag.md")], "docs",
                  "Notes on Milvus and RAG")
    try:
        with LiveServer(create_app(settings, searcher=searcher)) as live:
            yield live.url
    finally:
        searcher.close()


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        pytest.skip(f"Chromium not installed ({CHROMIUM}, {CHROMEDRIVER}): apt-get install chromium chromium-driver")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync",
                 "--disable-quic", "--disable-extensions", "--window-size=1400,1000",
                 f"--user-data-dir={tmp_path / 'chromium-profile'}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    driver.set_page_load_timeout(WAIT_S)
    try:
        yield driver
    finally:
        driver.quit()


def test_ask_watch_steps_read_report_and_open_a_cited_source(server: str, browser: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, WAIT_S)
    browser.get(server + "/")
    wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, "#collections input[value='docs']")))
    assert "2 chunks" in browser.find_element(By.ID, "collections").text
    wait.until(lambda d: "LLM scripted · embeddings test-hash-64" in d.find_element(By.ID, "info").text)

    browser.find_element(By.CSS_SELECTOR, "#collections input[value='docs']").click()
    browser.find_element(By.ID, "question").send_keys(QUESTION)
    browser.find_element(By.ID, "ask").click()

    citation = wait.until(ec.element_to_be_clickable((By.CSS_SELECTOR, "#answer a.cite")))
    steps = [li.get_attribute("data-kind") for li in browser.find_elements(By.CSS_SELECTOR, "#steps li")]
    assert steps[0] == "query.start" and steps[-1] == "query.report"
    for kind in ("query.sub_queries", "query.routed", "query.accepted", "query.gaps"):
        assert kind in steps
    steps_text = browser.find_element(By.ID, "steps").text
    assert "kept 1 of 2 new chunks" in steps_text and "nothing left to search" in steps_text  # as the CLI says
    answer = browser.find_element(By.ID, "answer")
    assert "Milvus Lite is the embedded edition" in answer.text
    assert answer.find_element(By.TAG_NAME, "strong").text == "no server"  # Markdown rendered
    notes = browser.find_element(By.ID, "notes").text  # the report's notes, as the Markdown has them
    assert "Citations. 1 sentence of the answer cites sources that do not hold most of its words" in notes
    assert "“It was first built by penguins on the Moon (1).” cites source 1, with 0 % of its words" in notes
    assert "LLM calls" in browser.find_element(By.ID, "usage").text
    assert browser.find_element(By.ID, "copy").is_enabled() and browser.find_element(By.ID, "download").is_enabled()
    wait.until(lambda d: d.find_element(By.ID, "status").text == "done")

    citation.click()
    panel = wait.until(ec.visibility_of_element_located((By.ID, "source-panel")))
    assert panel.find_element(By.ID, "source-title").text == "Source [1]"
    assert panel.find_element(By.ID, "source-location").text.endswith("milvus.md")
    assert panel.find_element(By.ID, "source-collection").text == "docs"
    assert "stores everything in one local file" in panel.find_element(By.ID, "source-text").text
    assert "active" in citation.get_attribute("class")

    ARTIFACTS.mkdir(exist_ok=True)
    browser.save_screenshot(str(ARTIFACTS / "web-report.png"))
    severe = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert not severe, severe  # no script errors, no Content-Security-Policy violations


def test_swagger_ui_renders_under_its_content_security_policy(server: str, browser: Any) -> None:
    """/docs: Swagger UI loads its local assets and the schema with no CSP violation and no remote request."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(server + "/docs")
    WebDriverWait(browser, WAIT_S).until(ec.presence_of_element_located((By.CSS_SELECTOR, ".opblock-tag")))
    assert "deepsearcher" in browser.find_element(By.CSS_SELECTOR, ".info .title").text
    assert "/api/load" in browser.find_element(By.ID, "swagger-ui").text
    resources = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert resources and all(url.startswith(server) or url.startswith("data:") for url in resources), resources
    severe = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert not severe, severe


def test_a_reply_taken_back_leaves_the_streamed_preview(tmp_path: Path, browser: Any) -> None:
    """The report's first reply holds only source numbers; it streams, is taken back (``query.answer_restart``) and
    the page's preview is empty again while the reply in words is still being asked for (the model holds it until
    the test has looked)."""
    import threading

    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    from deepsearcher.agents import prompts
    from deepsearcher.testing.scripted import ScriptedChatModel

    asked, release = threading.Event(), threading.Event()
    by_step = responder()

    def reply(messages: Any) -> str:
        if messages[-1]["content"] == prompts.IN_WORDS:
            asked.set()
            assert release.wait(2 * WAIT_S), "the test never released the reply in words"
            return ANSWER
        if messages[-1]["content"].startswith("Answer the question below"):
            return "[1][2]"
        return by_step(messages)

    with serve(tmp_path, ScriptedChatModel([reply] * 400)) as url:
        wait = WebDriverWait(browser, WAIT_S)
        browser.get(url + "/")
        wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, "#collections input[value='docs']")))
        # every text the page gives the preview, in order: its textContent setter, recorded as it is called
        browser.execute_script("""
            const stream = document.getElementById("answer-stream");
            const text = Object.getOwnPropertyDescriptor(Node.prototype, "textContent");
            window.previews = [];
            Object.defineProperty(stream, "textContent", {
              get() { return text.get.call(this); },
              set(value) { window.previews.push(String(value)); text.set.call(this, value); },
            });
        """)
        browser.find_element(By.ID, "question").send_keys(QUESTION)
        browser.find_element(By.ID, "ask").click()
        try:
            assert asked.wait(FAILURE_TIMEOUT_S), "the report's reply in words was never asked for"
            wait.until(lambda d: "[1][2]" in d.execute_script("return window.previews.join('|')")
                       and d.execute_script("return window.previews.at(-1)") == "")
            shown = browser.execute_script("return window.previews")
            assert shown[-2].endswith("[1][2]") and shown[-1] == ""  # the numbers, then nothing: taken back
        finally:
            release.set()
        wait.until(lambda d: d.find_element(By.ID, "status").text == "done")
        answer = browser.find_element(By.ID, "answer").text
        assert "Milvus Lite is the embedded edition" in answer and "[1][2]" not in answer
        severe = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
        assert not severe, severe
