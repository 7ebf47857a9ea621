"""Actions: refused without the token, without the CSRF token, and from another site; with
them, they do what the CLI's command does, safety checks included."""

from __future__ import annotations

import re

import httpx2
from dashboard_env import API, Scene

from headway.dashboard.web import COOKIE, CSRF_HEADER


def logged_in(scene: Scene) -> tuple[httpx2.Client, str]:
    """A client holding a session, and the session's CSRF token (read from a page)."""
    client = httpx2.Client(base_url=scene.served.url, timeout=30)
    answer = client.post("/login", data={"token": scene.served.token, "next": "/rollouts"})
    assert answer.status_code == 303 and COOKIE in client.cookies
    page = client.get("/rollouts/default/web").text
    found = re.search(r'hx-headers=\'\{"X-CSRF-Token": "([^"]+)"\}\'', page)
    assert found is not None, "a logged-in page carries the CSRF token"
    return client, found.group(1)


def paused(scene: Scene) -> bool:
    return bool(scene.harness.status().get("pauseConditions"))


def test_an_action_without_a_session_is_refused(scene: Scene) -> None:
    answer = httpx2.post(scene.served.url + "/rollouts/default/web/actions/promote", timeout=30)
    assert answer.status_code == 401 and "read-only" in answer.text
    assert paused(scene)


def test_a_wrong_token_opens_no_session(scene: Scene) -> None:
    client = httpx2.Client(base_url=scene.served.url, timeout=30)
    answer = client.post("/login", data={"token": "not-the-token"})
    assert answer.status_code == 401 and COOKIE not in client.cookies


def test_an_action_without_the_csrf_token_is_refused(scene: Scene) -> None:
    client, _csrf = logged_in(scene)
    answer = client.post("/rollouts/default/web/actions/promote")
    assert answer.status_code == 403 and "CSRF" in answer.text
    answer = client.post("/rollouts/default/web/actions/promote", headers={CSRF_HEADER: "x"})
    assert answer.status_code == 403
    assert paused(scene)


def test_an_action_from_another_site_is_refused(scene: Scene) -> None:
    client, csrf = logged_in(scene)
    answer = client.post(
        "/rollouts/default/web/actions/promote",
        headers={CSRF_HEADER: csrf, "Origin": "https://evil.example"},
    )
    assert answer.status_code == 403 and "another site" in answer.text
    assert paused(scene)


def test_promote_with_session_and_csrf_unpauses_the_rollout(scene: Scene) -> None:
    client, csrf = logged_in(scene)
    answer = client.post("/rollouts/default/web/actions/promote", headers={CSRF_HEADER: csrf})
    assert answer.status_code == 200 and "promoted" in answer.text
    assert not paused(scene)
    scene.harness.settle()
    assert scene.harness.status()["currentStepIndex"] == 3


def test_promote_is_refused_while_the_canary_has_a_failed_run(scene: Scene) -> None:
    """The CLI's safety check holds here: the same function decides."""
    run = scene.harness.runs()[0]
    status = {**run["status"], "phase": "Failed", "message": "error-rate 0.3 >= 0.2"}
    scene.harness.cluster.patch_status(API, "AnalysisRun", run["metadata"]["name"], "default",
                                       status)
    client, csrf = logged_in(scene)
    answer = client.post("/rollouts/default/web/actions/promote", headers={CSRF_HEADER: csrf})
    assert answer.status_code == 409 and "not promoted" in answer.text
    assert paused(scene)


def test_abort_sets_status_abort(scene: Scene) -> None:
    client, csrf = logged_in(scene)
    answer = client.post("/rollouts/default/web/actions/abort", headers={CSRF_HEADER: csrf})
    assert answer.status_code == 200
    assert scene.harness.status().get("abort") is True


def test_app_sync_is_refused_while_an_operation_runs(scene: Scene) -> None:
    client, csrf = logged_in(scene)
    answer = client.post("/applications/argocd/guestbook/actions/sync",
                         headers={CSRF_HEADER: csrf})
    assert answer.status_code == 409 and "already in progress" in answer.text
    app = scene.harness.cluster.get(API, "Application", "guestbook", "argocd")
    assert "operation" not in app


def test_app_terminate_marks_the_operation_terminating(scene: Scene) -> None:
    client, csrf = logged_in(scene)
    answer = client.post("/applications/argocd/guestbook/actions/terminate",
                         headers={CSRF_HEADER: csrf})
    assert answer.status_code == 200, answer.text
    app = scene.harness.cluster.get(API, "Application", "guestbook", "argocd")
    assert app["status"]["operationState"]["phase"] == "Terminating"


def test_app_refresh_writes_the_refresh_annotation(scene: Scene) -> None:
    client, csrf = logged_in(scene)
    answer = client.post("/applications/argocd/guestbook/actions/refresh",
                         headers={CSRF_HEADER: csrf})
    assert answer.status_code == 200
    app = scene.harness.cluster.get(API, "Application", "guestbook", "argocd")
    assert app["metadata"]["annotations"]["argocd.argoproj.io/refresh"] == "normal"


def test_logout_ends_the_session(scene: Scene) -> None:
    client, csrf = logged_in(scene)
    client.post("/logout")
    answer = client.post("/rollouts/default/web/actions/abort", headers={CSRF_HEADER: csrf})
    assert answer.status_code == 401
