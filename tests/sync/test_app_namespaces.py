"""Which namespaces' Applications a controller serves, and which a project accepts
(Argo CD's `application.namespaces` and `AppProject.spec.sourceNamespaces`)."""

from __future__ import annotations

import pytest

from headway.sync.project import app_namespace_managed, source_namespace_refusal
from sync.test_project import spec


@pytest.mark.parametrize(
    ("namespace", "patterns", "managed"),
    [
        ("argocd", (), True),  # the control namespace, always
        ("team-a", (), False),  # by default nothing else
        ("team-a", ("team-a",), True),
        ("team-a", ("team-*",), True),
        ("team-a-prod", ("team-?",), False),
        ("team-b", ("team-a", "team-b"), True),
        ("team-a", ("/^team-[a-c]$/",), True),  # a regular expression
        ("team-z", ("/^team-[a-c]$/",), False),
        ("team-a", ("/[unclosed/",), False),  # an unreadable pattern permits nothing
        ("", ("team-*",), False),
    ],
)
def test_app_namespace_managed(namespace: str, patterns: tuple[str, ...], managed: bool) -> None:
    assert (
        app_namespace_managed(namespace, control_namespace="argocd", patterns=patterns) is managed
    )


def test_source_namespaces_of_a_project() -> None:
    team = spec(source_namespaces=("team-a", "shared-*"))
    allow = {"control_namespace": "argocd"}
    assert source_namespace_refusal("team", team, app_namespace="argocd", **allow) is None
    assert source_namespace_refusal("team", team, app_namespace="team-a", **allow) is None
    assert source_namespace_refusal("team", team, app_namespace="shared-x", **allow) is None
    refused = source_namespace_refusal("team", team, app_namespace="team-b", **allow)
    assert str(refused) == (
        "project 'team': an Application in namespace team-b may not use this project "
        "(sourceNamespaces does not list it)"
    )
    # A project without sourceNamespaces accepts only the control namespace's Applications.
    assert source_namespace_refusal("p", spec(), app_namespace="team-a", **allow) is not None
    assert source_namespace_refusal("p", spec(), app_namespace="argocd", **allow) is None
