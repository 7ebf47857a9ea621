"""The dashboard in a real headless Chromium (Debian's `chromium` and `chromium-driver`,
driven by Selenium): every page renders, a rollout's step advances on screen without a
reload, an action button is refused without the token and works with it. A screenshot of each
page is kept in `artifacts/dashboard/` (CI keeps that directory)."""

from __future__ import annotations

from pathlib import Path

from dashboard_env import API, Scene
from selenium.common.exceptions import NoAlertPresentException, StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from polling import wait_for

ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "dashboard"


def shoot(browser: WebDriver, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(ARTIFACTS / f"{name}.png"))


def text_of(browser: WebDriver, element_id: str) -> str:
    try:
        return str(browser.find_element(By.ID, element_id).text)
    except StaleElementReferenceException:  # swapped out between find and read
        return ""


def stream_open(browser: WebDriver) -> bool:
    return browser.execute_script("return document.body.dataset.stream") == "open"


def confirm(browser: WebDriver) -> bool:
    try:
        browser.switch_to.alert.accept()
        return True
    except NoAlertPresentException:
        return False


def mark_page(browser: WebDriver) -> None:
    """A flag a reload would lose: the page must change under it without one."""
    browser.execute_script("window.headwayNoReload = true")


def not_reloaded(browser: WebDriver) -> bool:
    return bool(browser.execute_script("return window.headwayNoReload === true"))


def test_every_page_renders(scene: Scene, browser: WebDriver) -> None:
    url = scene.served.url
    for name, path, wanted in (
        ("applications", "/applications", "guestbook"),
        ("application", "/applications/argocd/guestbook", "waiting for Deployment/web"),
        ("rollouts", "/rollouts", "web"),
        ("rollout", "/rollouts/default/web", "setWeight: 25"),
        ("promotions", "/promotions", "Promotions"),
    ):
        browser.get(url + path)
        wait_for(lambda w=wanted: w in browser.find_element(By.TAG_NAME, "main").text,
                 what=f"{path} showing {wanted!r}")
        shoot(browser, name)
    browser.get(url + "/rollouts/default/web")
    wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "[data-metric] canvas"),
             what="the AnalysisRun chart drawn")


def test_a_live_step_advances_on_screen_without_reload(scene: Scene, browser: WebDriver) -> None:
    browser.get(scene.served.url + "/rollouts/default/web")
    wait_for(lambda: stream_open(browser), what="the event stream open")
    assert text_of(browser, "rollout-step") == "1/4"
    mark_page(browser)
    scene.harness.patch_status({"pauseConditions": None})  # `rollouts promote`, from elsewhere
    scene.harness.settle()  # the real controller: setWeight 50, then the pause at step 3
    wait_for(lambda: text_of(browser, "rollout-step") == "3/4", what="step 3/4 on screen")
    current = browser.find_element(By.CSS_SELECTOR, "#rollout-steps li.current")
    assert current.get_attribute("data-step") == "3"
    assert not_reloaded(browser)
    shoot(browser, "rollout-advanced")


def test_an_action_is_refused_without_the_token_and_works_with_it(
    scene: Scene, browser: WebDriver
) -> None:
    url = scene.served.url
    browser.get(url + "/rollouts/default/web")
    browser.find_element(By.ID, "action-abort").click()
    wait_for(lambda: confirm(browser), what="the confirmation")
    wait_for(lambda: "read-only" in text_of(browser, "flash"), what="the refusal shown")
    assert not scene.harness.status().get("abort")
    shoot(browser, "action-refused")

    browser.get(url + "/login?next=/rollouts/default/web")
    browser.find_element(By.ID, "token").send_keys(scene.served.token)
    browser.find_element(By.ID, "login").click()
    wait_for(lambda: browser.find_elements(By.ID, "logout"), what="logged in")
    wait_for(lambda: stream_open(browser), what="the event stream open")
    mark_page(browser)
    browser.find_element(By.ID, "action-abort").click()
    wait_for(lambda: confirm(browser), what="the confirmation")
    wait_for(lambda: "aborted" in text_of(browser, "flash"), what="the action's answer")
    assert scene.harness.status().get("abort") is True
    scene.harness.settle()  # the controller acts on the abort
    wait_for(lambda: "(aborted)" in text_of(browser, "rollout-phase"),
             what="the abort shown live")
    assert not_reloaded(browser)
    shoot(browser, "action-done")


def test_an_application_refreshes_on_request_and_updates_live(
    scene: Scene, browser: WebDriver
) -> None:
    url, cluster = scene.served.url, scene.harness.cluster
    browser.get(url + "/login?next=/applications/argocd/guestbook")
    browser.find_element(By.ID, "token").send_keys(scene.served.token)
    browser.find_element(By.ID, "login").click()
    wait_for(lambda: browser.find_elements(By.ID, "logout"), what="logged in")
    wait_for(lambda: stream_open(browser), what="the event stream open")
    assert text_of(browser, "app-sync") == "OutOfSync"
    mark_page(browser)
    browser.find_element(By.ID, "action-refresh").click()
    wait_for(lambda: confirm(browser), what="the confirmation")
    wait_for(lambda: "refresh of guestbook requested" in text_of(browser, "flash"),
             what="the action's answer")
    app = cluster.get(API, "Application", "guestbook", "argocd")
    assert app["metadata"]["annotations"]["argocd.argoproj.io/refresh"] == "normal"
    # the controller's next status: synced, the operation over
    status = {**app["status"], "sync": {"status": "Synced", "revision": "c" * 40}}
    status["operationState"] = {**status["operationState"], "phase": "Succeeded",
                                "message": "successfully synced (all tasks run)"}
    cluster.patch_status(API, "Application", "guestbook", "argocd", status)
    wait_for(lambda: text_of(browser, "app-sync") == "Synced", what="Synced on screen")
    assert "Last result: Succeeded" in text_of(browser, "app-operation")
    assert not_reloaded(browser)
    shoot(browser, "application-synced")


def row_text(browser: WebDriver, app: str) -> str:
    try:
        rows = browser.find_elements(By.CSS_SELECTOR, f'tr[data-app="{app}"]')
        return str(rows[0].text) if rows else ""
    except StaleElementReferenceException:
        return ""


def test_the_applications_list_updates_a_row_and_gains_a_new_app_live(
    scene: Scene, browser: WebDriver
) -> None:
    from dashboard_env import application, application_status

    cluster = scene.harness.cluster
    browser.get(scene.served.url + "/applications")
    wait_for(lambda: stream_open(browser), what="the event stream open")
    assert "OutOfSync" in row_text(browser, "argocd/guestbook")
    mark_page(browser)
    status = {**application_status(), "sync": {"status": "Synced", "revision": "c" * 40}}
    cluster.patch_status(API, "Application", "guestbook", "argocd", status)
    wait_for(lambda: "Synced" in row_text(browser, "argocd/guestbook").replace("OutOfSync", ""),
             what="the guestbook row Synced")
    cluster.apply(application("shop"), field_manager="test", force=True)
    wait_for(lambda: row_text(browser, "argocd/shop"), what="the new app's row")
    assert not_reloaded(browser)
    shoot(browser, "applications-live")
