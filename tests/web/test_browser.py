"""The viewer in a real headless Chromium (Debian's chromium + chromium-driver, through Selenium):
one browser and one served world for the module; every session comes from the real pipeline."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import Select

from tests.server.conftest import HIGH_CPU_EN, HIGH_CPU_ZH
from tests.support.waiting import until
from tests.web.conftest import TOKEN
from tests.web.world import XSS_MESSAGE, ViewerWorld

SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "viewer.png"
REJECTED = "Is user-service's HighMemoryUsage alert still firing right now?"
FAILING = "order-service 有 HighLatency 告警吗？"
XSS_QUESTION = "user-service 有 OutOfMemoryError 日志吗？"
MANY_CALLS = "Any ERROR logs with OutOfMemoryError on user-service?"
FEEDBACK_QUESTION = "gateway 有 502 错误日志吗？"
LYING = "Does gateway have a HighErrorRate alert?"
SURVEY = "what's wrong with order-service?"


@pytest.fixture(scope="module")
def sessions(world: ViewerWorld) -> dict[str, str]:
    """Session ids by role, made once for the module."""
    world.executor.forged_rounds[REJECTED] = {1, 2}
    world.executor.failing.add(FAILING)
    world.executor.extra_calls[MANY_CALLS] = 300
    world.composer.lying.add(LYING)
    ids = {
        "reference": ("ref", HIGH_CPU_ZH, "zh"),
        "english": ("ref-en", HIGH_CPU_EN, "en"),
        "rejected": ("rejected", REJECTED, "en"),
        "failed": ("failed", FAILING, "zh"),
        "xss": ("xss", XSS_QUESTION, "zh"),
        "many": ("many", MANY_CALLS, "en"),
        "feedback": ("feedback", FEEDBACK_QUESTION, "zh"),
        "refused": ("refused", LYING, "en"),
        "survey": ("survey", SURVEY, "en"),
    }
    for session_id, question, language in ids.values():
        world.ask(question, session_id, language)
    return {role: value[0] for role, value in ids.items()}


@pytest.fixture(scope="module")
def page(world: ViewerWorld, browser: webdriver.Chrome, sessions: dict[str, str]) -> webdriver.Chrome:
    """The browser, logged in through the form."""
    _login(browser, world, TOKEN)
    return browser


def _login(browser: webdriver.Chrome, world: ViewerWorld, token: str) -> None:
    browser.get(f"{world.url}/login")
    browser.find_element(By.ID, "token").send_keys(token)
    _click_and_load(browser, browser.find_element(By.ID, "login"))


def _wait(check: object, what: str) -> None:
    until(check, within=15, what=what)  # type: ignore[arg-type]


def _rows(browser: webdriver.Chrome) -> set[str]:
    return {
        row.get_attribute("data-session") or ""
        for row in browser.find_elements(By.CSS_SELECTOR, "tr.session")
    }


def _open(browser: webdriver.Chrome, world: ViewerWorld, path: str) -> None:
    browser.get(f"{world.url}{path}")
    _wait(lambda: browser.execute_script("return document.readyState") == "complete", f"{path} loaded")


def test_login_form_refuses_a_wrong_token_then_admits_the_right_one(
    world: ViewerWorld, browser: webdriver.Chrome, sessions: dict[str, str]
) -> None:
    browser.delete_all_cookies()
    _open(browser, world, f"/sessions/{sessions['reference']}")
    assert urlparse(browser.current_url).path == "/login"
    browser.find_element(By.ID, "token").send_keys("wrong-token")
    browser.find_element(By.ID, "login").click()
    _wait(lambda: bool(browser.find_elements(By.ID, "login-error")), "login error shown")
    assert "not valid" in browser.find_element(By.ID, "login-error").text
    browser.find_element(By.ID, "token").send_keys(TOKEN)
    browser.find_element(By.ID, "login").click()
    # Back where the redirect to the form started.
    _wait(
        lambda: urlparse(browser.current_url).path == f"/sessions/{sessions['reference']}", "back at the page"
    )
    cookie = browser.get_cookie("evigate_session")
    assert cookie is not None and cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert browser.execute_script("return document.cookie") == ""  # nothing readable by script


def _filter(browser: webdriver.Chrome, name: str, value: str) -> None:
    """Chooses one option; the page's script submits the form on change."""
    Select(browser.find_element(By.ID, f"f-{name}")).select_by_visible_text(value)
    _wait(lambda: parse_qs(urlparse(browser.current_url).query).get(name) == [value], f"filtered by {name}")
    _wait(lambda: browser.execute_script("return document.readyState") == "complete", "list loaded")


def test_session_list_is_newest_first_and_filters(
    world: ViewerWorld, page: webdriver.Chrome, sessions: dict[str, str]
) -> None:
    _open(page, world, "/sessions")
    listed = [row.get_attribute("data-session") for row in page.find_elements(By.CSS_SELECTOR, "tr.session")]
    created = {s: world.trace(s).session.created_at for s in sessions.values()}
    mine = [s for s in listed if s in created]
    assert mine == sorted(created, key=lambda s: created[s], reverse=True)

    _filter(page, "verdict", "REJECT")
    assert _rows(page) == {sessions["rejected"]}
    _open(page, world, "/sessions")
    _filter(page, "status", "FAILED")
    assert _rows(page) == {sessions["failed"]}
    _open(page, world, "/sessions")
    skill = world.trace(sessions["reference"]).session.planner_plan["selected_skill"]  # type: ignore[index]
    _filter(page, "skill", skill)
    expected = {
        s
        for s in sessions.values()
        if (world.trace(s).session.planner_plan or {}).get("selected_skill") == skill
    }
    assert sessions["reference"] in _rows(page) and _rows(page) == expected
    _open(page, world, "/sessions")
    box = page.find_element(By.ID, "f-q")
    box.send_keys("OutOfMemoryError", Keys.ENTER)
    _wait(lambda: "q=OutOfMemoryError" in page.current_url, "text filter applied")
    assert _rows(page) == {sessions["xss"], sessions["many"]}
    # The link leads to the session.
    page.find_element(By.CSS_SELECTOR, f'tr[data-session="{sessions["xss"]}"] a.session-link').click()
    _wait(lambda: urlparse(page.current_url).path == f"/sessions/{sessions['xss']}", "session opened")


def test_reference_session_shows_every_stage_and_linked_highlighted_citations(
    world: ViewerWorld, page: webdriver.Chrome, sessions: dict[str, str]
) -> None:
    trace = world.scored(sessions["reference"])
    _open(page, world, f"/sessions/{sessions['reference']}")
    assert page.find_element(By.ID, "question").text == trace.session.query
    timeline = page.find_element(By.ID, "timeline").text
    stages = trace.session.extras["stage_latencies"]  # type: ignore[index]
    for stage in stages:
        assert stage["stage"] in timeline
    for call in trace.invocations:
        assert f"#{call.id} {call.tool_name}" in timeline
    # The answer's sentence links to its claim, the claim's citation to the ref, highlighted there.
    sentence_link = page.find_element(By.CSS_SELECTOR, "#answer .sentence a.claim-link")
    claim = trace.rounds[-1].executor_output["claims"][0]  # type: ignore[index]
    assert sentence_link.text == claim["claim_id"]
    sentence_citation = sentence_link.find_element(By.XPATH, "..").find_element(
        By.CSS_SELECTOR, "a.sentence-citation"
    )
    binding = claim["evidence_bindings"][0]
    assert sentence_citation.text == f"#{binding['source_invocation_id']} {binding['raw_path']}"
    sentence_link.click()
    target = page.find_element(By.ID, urlparse(page.current_url).fragment)
    assert claim["claim_text"] in target.text
    citation = target.find_element(By.CSS_SELECTOR, "a.citation")
    citation.click()
    ref = page.find_element(By.ID, urlparse(page.current_url).fragment)
    _wait(ref.is_displayed, "cited ref shown (its collapsed call opened)")
    marked = " ".join(m.text for m in ref.find_elements(By.TAG_NAME, "mark"))
    assert sentence_citation.get_attribute("href").endswith(f"#{ref.get_attribute('id')}")  # type: ignore[union-attr]
    assert binding["raw_path"] in ref.text and marked == binding["evidence_excerpt"]
    # Gatekeeper, verifier and the evidence score with each rule's contribution.
    gate = trace.rounds[-1].gatekeeper_result or {}
    assert f"severity {gate['severity']}" in page.find_element(By.CSS_SELECTOR, "#round-1 .gate").text
    evaluation = trace.session.self_evaluation or {}
    assert page.find_element(By.ID, "score-value").text == str(evaluation["evidence_score"])
    factors = [f.text for f in page.find_elements(By.CSS_SELECTOR, "tr.factor")]
    assert [f"{f['delta']:+d}" for f in evaluation["factors"]] == [f.split()[0] for f in factors]
    # Nothing the page uses is blocked by its Content-Security-Policy (no inline script or style).
    console = page.get_log("browser")  # type: ignore[no-untyped-call]
    refused = [e["message"] for e in console if "Content Security Policy" in e["message"]]
    assert not refused, refused
    # docs/viewer.png in the README: the English twin of this session (CI images lack CJK fonts).
    world.scored(sessions["english"])
    _open(page, world, f"/sessions/{sessions['english']}")
    page.set_window_size(1280, 1100)
    page.save_screenshot(str(SCREENSHOT))
    page.set_window_size(1400, 1000)


def test_rejected_session_shows_both_rounds_and_the_rules_that_failed(
    world: ViewerWorld, page: webdriver.Chrome, sessions: dict[str, str]
) -> None:
    trace = world.trace(sessions["rejected"])
    _open(page, world, f"/sessions/{sessions['rejected']}")
    rounds = page.find_elements(By.CSS_SELECTOR, "article.round")
    assert len(rounds) == len(trace.rounds) == 2
    assert (
        [r.find_element(By.CSS_SELECTOR, ".round-verdict").text for r in rounds]
        == [(r.verdict or {}).get("verdict") for r in trace.rounds]
        == ["REJECT", "REJECT"]
    )
    assert page.find_element(By.ID, "verdict").text == "REJECT"
    retry = rounds[1].find_element(By.CSS_SELECTOR, ".retry").text
    for rule in (trace.rounds[1].retry_context or {})["failed_rules"]:
        assert rule in retry
    for index, record in enumerate(trace.rounds):
        errors = (record.gatekeeper_result or {})["errors"]
        shown = rounds[index].find_elements(By.CSS_SELECTOR, "tr.issue.error")
        assert len(shown) == len(errors) > 0
        for row, error in zip(shown, errors, strict=True):
            assert error["rule_id"] in row.text and error["severity"] in row.text
    # The forged citation names no recorded call: shown as unresolved, not as a link.
    assert rounds[0].find_elements(By.CSS_SELECTOR, ".citation.unresolved")


def test_feedback_from_the_page_records_it_and_the_case_appears(
    world: ViewerWorld, page: webdriver.Chrome, sessions: dict[str, str]
) -> None:
    session_id = sessions["feedback"]
    _open(page, world, f"/sessions/{session_id}")
    assert page.find_element(By.ID, "feedback-given").text == "none"
    _click_and_load(page, page.find_element(By.ID, "useful"))
    assert page.find_element(By.ID, "feedback-notice").text == "Feedback recorded."
    assert page.find_element(By.ID, "feedback-given").text == "useful"
    case_id = world.trace(session_id).case_id
    assert case_id and page.find_element(By.ID, "case-link").text == case_id
    page.refresh()  # post/redirect/get: a reload does not post again
    _click_and_load(page, page.find_element(By.ID, "useful"))  # and a second click changes nothing
    assert page.find_element(By.ID, "feedback-given").text == "useful"
    assert world.trace(session_id).case_id == case_id
    _click_and_load(page, page.find_element(By.ID, "case-link"))
    assert urlparse(page.current_url).path == "/cases"
    links = [a for a in page.find_elements(By.CSS_SELECTOR, "a.case-session") if a.text == session_id]
    assert len(links) == 1 and case_id in _row_of(links[0]).text
    (case,) = [c for c in world.run(world.app.database.repo.list_cases()) if c.case_id == case_id]  # type: ignore[union-attr]
    row = _row_of(links[0])
    assert row.find_element(By.CSS_SELECTOR, ".fault-category").text == case.fault_category
    assert row.find_element(By.CSS_SELECTOR, ".services").text == ", ".join(case.services)
    links[0].click()
    _wait(lambda: urlparse(page.current_url).path == f"/sessions/{session_id}", "back at the session")
    _open(page, world, "/sessions?feedback=useful")
    assert session_id in _rows(page)


def _stale(element: WebElement) -> bool:
    try:
        element.is_enabled()
    except StaleElementReferenceException:
        return True
    except WebDriverException as error:
        # asked while the old document is being replaced, Chrome says so as an "unknown error"
        if "does not belong to the document" in (error.msg or ""):
            return True
        raise
    return False


def _click_and_load(page: webdriver.Chrome, element: WebElement) -> None:
    """Clicks, and waits for the next page to replace this one (not for anything already here)."""
    old = page.find_element(By.TAG_NAME, "html")
    element.click()
    _wait(lambda: _stale(old), "the next page loaded")
    _wait(lambda: page.execute_script("return document.readyState") == "complete", "page complete")


def _row_of(element: WebElement) -> WebElement:
    return element.find_element(By.XPATH, "./ancestor::tr")


def test_script_in_a_log_line_renders_as_text(
    world: ViewerWorld, page: webdriver.Chrome, sessions: dict[str, str]
) -> None:
    trace = world.trace(sessions["xss"])
    texts = [
        ref["text"] for call in trace.invocations for ref in call.retrieval_details.get("evidence_refs", [])
    ]
    assert any("<script>" in t for t in texts)  # the payload reached the evidence
    _open(page, world, f"/sessions/{sessions['xss']}")
    page.find_element(By.CSS_SELECTOR, "button.expand-all").click()
    assert page.execute_script("return window.__xss") is None
    assert not page.find_elements(By.CSS_SELECTOR, "main img, main script")
    shown = " ".join(r.text for r in page.find_elements(By.CSS_SELECTOR, ".ref-text"))
    assert "<script>window.__xss = 1</script>" in shown and 'onerror="window.__xss = 2"' in shown
    assert XSS_MESSAGE.split(": ", 1)[1] in page.find_element(By.ID, "calls").text


def test_a_session_with_300_tool_calls_stays_collapsed_and_readable(
    world: ViewerWorld, page: webdriver.Chrome, sessions: dict[str, str]
) -> None:
    trace = world.trace(sessions["many"])
    assert len(trace.invocations) > 300
    _open(page, world, f"/sessions/{sessions['many']}")
    calls = page.find_elements(By.CSS_SELECTOR, "details.call")
    assert len(calls) == len(trace.invocations)
    assert not any(c.get_attribute("open") for c in calls)  # collapsed by default
    timeline = page.find_element(By.ID, "timeline-details")
    assert timeline.get_attribute("open") is None  # a long waterfall starts collapsed too
    timeline.find_element(By.TAG_NAME, "summary").click()
    bars = page.find_elements(By.CSS_SELECTOR, "#timeline g.bar")
    assert len(bars) == len(trace.invocations) + len(trace.session.extras["stage_latencies"])  # type: ignore[index]
    last = trace.invocations[-1]
    page.find_element(By.CSS_SELECTOR, f'#timeline a[href="#call-{last.id}"] rect.hit').click()
    opened = page.find_element(By.ID, f"call-{last.id}")
    _wait(lambda: opened.get_attribute("open") is not None, "the bar's call opened")
    assert last.tool_name in opened.text


def test_answer_check_refusals_are_shown_apart_from_the_answer(
    world: ViewerWorld, page: webdriver.Chrome, sessions: dict[str, str]
) -> None:
    check = (world.trace(sessions["refused"]).session.extras or {})["answer_check"]
    assert check["rejections"]  # the pipeline refused the invented text
    _open(page, world, f"/sessions/{sessions['refused']}")
    answer = " ".join(s.text for s in page.find_elements(By.CSS_SELECTOR, "#answer .sentence"))
    assert "OPS-4711" not in answer and "99%" not in answer
    refusals = page.find_elements(By.CSS_SELECTOR, "#answer-check details.rejection")
    assert len(refusals) == len(check["rejections"])
    refusals[0].find_element(By.TAG_NAME, "summary").click()
    assert world.composer.lie.strip() in refusals[0].text
    for violation in check["rejections"][0]["violations"]:
        assert violation["rule_id"] in refusals[0].text
    # the refused sentence itself, in red with the rules that refused it
    (refused,) = refusals[0].find_elements(By.CSS_SELECTOR, "li.sentence.refused")
    assert world.composer.lie in refused.text and "answer.unsupported_number" in refused.text
    assert check["answer_source"] in page.find_element(By.ID, "answer-check").text


def test_a_survey_answer_links_every_sentence_and_lists_the_runbook_steps_once(
    world: ViewerWorld, page: webdriver.Chrome, sessions: dict[str, str]
) -> None:
    composed = world.trace(sessions["survey"]).session.composer_output or {}
    stored = composed["sentences"]
    steps = [x["text"] for x in stored if x["kind"] == "step"]
    assert steps, stored  # the demo's order-service runbook gives steps
    _open(page, world, f"/sessions/{sessions['survey']}")
    shown = page.find_elements(By.CSS_SELECTOR, "#answer .sentence")
    assert [x.find_element(By.CSS_SELECTOR, ".sentence-text").text for x in shown] == [
        x["text"] for x in stored
    ]
    assert not page.find_elements(By.CSS_SELECTOR, "#answer .sentence.unbound")
    for element, sentence in zip(shown, stored, strict=True):
        links = element.find_elements(By.CSS_SELECTOR, "a.claim-link")
        if sentence["fixed_line"]:
            assert not links
            continue
        # every sentence links to each claim it is bound to, and each link lands on the page
        assert [a.text for a in links] == sentence["claim_ids"] + sentence["hypothesis_ids"], sentence
        for link in links:
            target = (link.get_attribute("href") or "").split("#", 1)[1]
            assert page.find_elements(By.ID, target), target
    # the cited excerpts are highlighted beside the sentence that cites them
    assert page.find_elements(By.CSS_SELECTOR, "#answer mark.sentence-excerpt")
    # the runbook's steps: one numbered list, in order, after its header
    (listed,) = page.find_elements(By.CSS_SELECTOR, "#answer ol.answer-steps")
    assert [
        li.find_element(By.CSS_SELECTOR, ".sentence-text").text
        for li in listed.find_elements(By.TAG_NAME, "li")
    ] == steps
    header = listed.find_element(By.XPATH, "preceding-sibling::p[1]")
    assert header.find_element(By.CSS_SELECTOR, ".sentence-text").text == "Steps (from the runbook):"


def test_a_sentence_bound_to_no_claim_is_shown_as_a_bug_in_red(
    world: ViewerWorld, page: webdriver.Chrome
) -> None:
    """No check passes such a sentence; stored by hand, as a bug or an older writer would leave it."""
    assert world.app.database is not None
    repo = world.app.database.repo
    text = "order-service is fine."
    sentence = {"kind": "headline", "text": text, "claim_ids": [], "hypothesis_ids": [], "fixed_line": ""}
    output = {
        "answer_summary": text,
        "recommended_actions": [],
        "user_facing_answer": text,
        "sentences": [sentence],
    }
    world.run(repo.create_session("unbound", "is order-service fine?", "en", "viewer-test"))
    world.run(repo.finish_success("unbound", text, output, {}, [], {}))
    _open(page, world, "/sessions/unbound")
    (shown,) = page.find_elements(By.CSS_SELECTOR, "#answer .sentence")
    assert "unbound" in (shown.get_attribute("class") or "").split()
    assert shown.find_element(By.CSS_SELECTOR, ".bug").text == "bug: bound to no claim"
    red = "rgba(207, 34, 46, 1)"  # --reject
    assert shown.value_of_css_property("color") == red
    assert shown.find_element(By.CSS_SELECTOR, ".bug").value_of_css_property("color") == red
