"""Issue 15: ApplicationSet generators compute the parameters Argo CD's do (list, clusters,
git directories and files, matrix, merge, selector), in both template modes."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from headway.appset.generate import PARAMS_ERROR, RENDER_ERROR, Generation, generate
from headway.appset.inputs import ClusterSecret, StaticInputs

REPO = "https://git.example/org/deploy.git"
TREE = {
    "apps/api/deploy.yaml": b"kind: ConfigMap",
    "apps/web/deploy.yaml": b"kind: ConfigMap",
    "apps/.cache/x.yaml": b"",
    "apps/legacy/deploy.yaml": b"",
    "clusters/eng/dev/config.json": b'{"cluster": {"name": "dev", "address": "https://dev"}}',
    "clusters/eng/prod/config.yaml": b"cluster:\n  name: prod\n  address: https://prod\n",
    "clusters/list.yaml": b"- cluster: {name: a}\n- cluster: {name: b}\n",
}
INPUTS = StaticInputs(
    cluster_secrets=(
        ClusterSecret("staging", "https://staging:6443", labels={"env": "staging"}),
        ClusterSecret("prod_eu", "https://prod-eu:6443", project="team", labels={"env": "prod"}),
    ),
    repositories={REPO: TREE},
)


def _set(generators: list[Any], template: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "ApplicationSet",
        "metadata": {"name": "s", "namespace": "argocd"},
        "spec": {"generators": generators, "template": template, **spec},
    }


def _template(name: str, **spec: Any) -> dict[str, Any]:
    body = {"project": "default", "destination": {"server": "https://kubernetes.default.svc"}}
    return {"metadata": {"name": name}, "spec": {**body, **spec}}


def _names(generation: Generation) -> list[str]:
    assert generation.error is None, generation.error
    return [a.name for a in generation.apps]


GO = {"goTemplate": True, "goTemplateOptions": ["missingkey=error"]}


def test_list_elements_render_in_both_modes() -> None:
    elements = [
        {"cluster": "dev", "values": {"tier": "a"}},
        {"cluster": "prod", "values": {"tier": "b"}},
    ]
    fast = generate(
        _set([{"list": {"elements": elements}}], _template("{{cluster}}-{{values.tier}}")), INPUTS
    )
    go = generate(
        _set([{"list": {"elements": elements}}], _template("{{.cluster}}-{{.values.tier}}"), **GO),
        INPUTS,
    )
    assert _names(fast) == _names(go) == ["dev-a", "prod-b"]


def test_fasttemplate_leaves_unknown_tags_as_written() -> None:
    generation = generate(
        _set([{"list": {"elements": [{"a": "x"}]}}], _template("{{a}}-{{ b }}")), INPUTS
    )
    assert _names(generation) == ["x-{{ b }}"]


def test_missing_key_is_no_value_by_default_and_an_error_with_missingkey_error() -> None:
    loose = generate(
        _set([{"list": {"elements": [{"a": "x"}]}}], _template("{{.a}}{{.b}}"), goTemplate=True),
        INPUTS,
    )
    assert _names(loose) == ["x<no value>"]
    strict = generate(
        _set([{"list": {"elements": [{"a": "x"}]}}], _template("{{.a}}{{.b}}"), **GO), INPUTS
    )
    assert strict.error is not None and strict.error.reason == RENDER_ERROR
    assert 'map has no entry for key "b"' in strict.error.message
    assert strict.error.path == ("spec", "template", "metadata", "name")
    assert strict.apps == ()


def test_clusters_generator_adds_the_local_cluster_unless_a_selector_is_given() -> None:
    template = _template("{{.nameNormalized}}", destination={"server": "{{.server}}"})
    every = generate(_set([{"clusters": {}}], template, **GO), INPUTS)
    assert _names(every) == ["staging", "prod-eu", "in-cluster"]
    chosen = generate(
        _set([{"clusters": {"selector": {"matchLabels": {"env": "prod"}}}}], template, **GO), INPUTS
    )
    assert _names(chosen) == ["prod-eu"]
    assert chosen.apps[0].manifest["spec"]["destination"]["server"] == "https://prod-eu:6443"


def test_cluster_metadata_and_values_are_parameters() -> None:
    generator = {
        "clusters": {
            "selector": {"matchLabels": {"env": "prod"}},
            "values": {"branch": "{{.metadata.labels.env}}-main"},
        }
    }
    template = _template(
        "{{.name}}", source={"repoURL": REPO, "targetRevision": "{{.values.branch}}"}
    )
    [app] = generate(_set([generator], template, **GO), INPUTS).apps
    assert app.manifest["spec"]["source"]["targetRevision"] == "prod-main"
    flat = generate(
        _set(
            [{"clusters": {"values": {"b": "{{name}}"}}}],
            _template("{{metadata.labels.env}}-{{values.b}}"),
        ),
        INPUTS,
    )
    assert _names(flat)[:2] == ["staging-staging", "prod-prod_eu"]


def test_git_directories_match_like_go_path_match_with_excludes_and_no_hidden() -> None:
    directories = [{"path": "apps/*"}, {"path": "apps/legacy", "exclude": True}]
    template = _template("{{.path.basename}}", source={"repoURL": REPO, "path": "{{.path.path}}"})
    generation = generate(
        _set(
            [{"git": {"repoURL": REPO, "revision": "HEAD", "directories": directories}}],
            template,
            **GO,
        ),
        INPUTS,
    )
    assert _names(generation) == ["api", "web"]
    assert generation.apps[0].manifest["spec"]["source"]["path"] == "apps/api"


def test_git_directories_fasttemplate_path_params() -> None:
    generator = {"git": {"repoURL": REPO, "directories": [{"path": "apps/web"}]}}
    [app] = generate(
        _set([generator], _template("{{path.basename}}-{{path[0]}}-{{path}}")), INPUTS
    ).apps
    assert app.name == "web-apps-apps/web"


def test_git_files_flatten_objects_and_add_path_params() -> None:
    generator = {"git": {"repoURL": REPO, "files": [{"path": "clusters/**/config.*"}]}}
    fast = generate(
        _set([generator], _template("{{cluster.name}}-{{path.basename}}-{{path.filename}}")), INPUTS
    )
    assert _names(fast) == ["dev-dev-config.json", "prod-prod-config.yaml"]
    go = generate(
        _set([generator], _template("{{.cluster.name}}-{{index .path.segments 1}}"), **GO), INPUTS
    )
    assert _names(go) == ["dev-eng", "prod-eng"]


def test_git_file_holding_a_list_gives_a_set_per_object() -> None:
    generator = {"git": {"repoURL": REPO, "files": [{"path": "clusters/list.yaml"}]}}
    assert _names(generate(_set([generator], _template("{{.cluster.name}}"), **GO), INPUTS)) == [
        "a",
        "b",
    ]


def test_an_unreachable_repository_stops_generation() -> None:
    generator = {"git": {"repoURL": "https://elsewhere/x.git", "directories": [{"path": "*"}]}}
    generation = generate(_set([generator], _template("{{.path.basename}}"), **GO), INPUTS)
    assert generation.error is not None and generation.error.reason == PARAMS_ERROR
    assert "not available" in generation.error.message


def test_matrix_crosses_git_with_list_and_interpolates_the_second() -> None:
    matrix = {
        "matrix": {
            "generators": [
                {
                    "git": {
                        "repoURL": REPO,
                        "directories": [{"path": "apps/api"}, {"path": "apps/web"}],
                    }
                },
                {
                    "list": {
                        "elements": [
                            {"env": "dev", "dir": "{{.path.basename}}"},
                            {"env": "prod", "dir": "x"},
                        ]
                    }
                },
            ]
        }
    }
    generation = generate(
        _set([matrix], _template("{{.path.basename}}-{{.env}}-{{.dir}}"), **GO), INPUTS
    )
    assert _names(generation) == ["api-dev-api", "api-prod-x", "web-dev-web", "web-prod-x"]


def test_matrix_without_gotemplate_refuses_conflicting_keys() -> None:
    matrix = {
        "matrix": {
            "generators": [
                {"list": {"elements": [{"a": "1"}]}},
                {"list": {"elements": [{"a": "2"}]}},
            ]
        }
    }
    generation = generate(_set([matrix], _template("{{a}}")), INPUTS)
    assert generation.error is not None and "duplicate key a" in generation.error.message


def test_merge_overrides_the_base_by_merge_key() -> None:
    merge = {
        "merge": {
            "mergeKeys": ["name"],
            "generators": [
                {"clusters": {"values": {"replicas": "1"}}},
                {"list": {"elements": [{"name": "staging", "values": {"replicas": "3"}}]}},
            ],
        }
    }
    generation = generate(_set([merge], _template("{{.name}}-{{.values.replicas}}"), **GO), INPUTS)
    assert _names(generation) == ["staging-3", "prod_eu-1", "in-cluster-1"]


def test_selector_filters_parameter_sets() -> None:
    generator = {
        "list": {"elements": [{"env": "dev"}, {"env": "prod"}]},
        "selector": {"matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["dev"]}]},
    }
    assert _names(generate(_set([generator], _template("{{.env}}"), **GO), INPUTS)) == ["prod"]


def test_unsupported_scm_provider_stops_generation_naming_the_provider() -> None:
    for provider in ("bitbucketServer", "bitbucket", "azureDevOps"):
        scm = {"scmProvider": {provider: {"api": "https://forge.example"}}}
        generation = generate(_set([scm], _template("x")), INPUTS)
        assert generation.error is not None
        assert generation.error.message == (
            f"scmProvider: {provider}: the {provider} provider is not supported by Headway; "
            "use github, gitlab or gitea"
        )
        assert generation.error.path[-1] == provider


def test_an_unknown_generator_kind_stops_generation() -> None:
    generation = generate(_set([{"scmProviders": {}}], _template("x")), INPUTS)
    assert generation.error is not None
    assert "unknown generator 'scmProviders'" in generation.error.message


def test_template_patch_merges_but_keeps_the_project() -> None:
    patch = yaml.safe_dump(
        {
            "spec": {"project": "other", "syncPolicy": {"automated": {"prune": True}}},
            "metadata": {"labels": {"env": "{{.env}}"}},
        }
    )
    generation = generate(
        _set(
            [{"list": {"elements": [{"env": "dev"}]}}],
            _template("{{.env}}"),
            templatePatch=patch,
            **GO,
        ),
        INPUTS,
    )
    [app] = generation.apps
    assert app.manifest["spec"]["project"] == "default"
    assert app.manifest["spec"]["syncPolicy"] == {"automated": {"prune": True}}
    assert app.manifest["metadata"]["labels"] == {"env": "dev"}


def test_resources_finalizer_unless_preserve_resources_on_deletion() -> None:
    generator = [{"list": {"elements": [{"a": "x"}]}}]
    [kept] = generate(_set(generator, _template("{{a}}")), INPUTS).apps
    assert kept.manifest["metadata"]["finalizers"] == ["resources-finalizer.argocd.argoproj.io"]
    preserve = _set(generator, _template("{{a}}"), syncPolicy={"preserveResourcesOnDeletion": True})
    [app] = generate(preserve, INPUTS).apps
    assert "finalizers" not in app.manifest["metadata"]


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("{{.name | normalize}}", "prod-eu"),
        ('{{.name | upper | replace "_" "-"}}', "PROD-EU"),
        ("{{trunc 4 .name}}", "prod"),
        ('{{ default "none" .missing }}', "none"),
        ('{{ if eq .project "team" }}t{{ else }}f{{ end }}', "t"),
        # Argo CD's GoTemplate documentation: an optional parameter read with a default.
        ('{{.name}}{{dig "nameSuffix" "" .}}', "prod_eu"),
        ('{{dig "metadata" "labels" "env" "none" .}}', "prod"),
        ('{{dig "metadata" "labels" "tier" "none" .}}', "none"),
        # A raw string holding a template passes it through (Argo CD's matrix documentation).
        ("{{ `{{ .name }}` }}", "{{ .name }}"),
    ],
)
def test_sprig_subset(expression: str, expected: str) -> None:
    template = _template("n", info=[{"name": "x", "value": expression}])
    generator = {"clusters": {"selector": {"matchLabels": {"env": "prod"}}}}
    [app] = generate(_set([generator], template, goTemplate=True), INPUTS).apps
    assert app.manifest["spec"]["info"][0]["value"] == expected


def test_duplicate_generated_names_stop_generation() -> None:
    generation = generate(
        _set([{"list": {"elements": [{"a": "x"}, {"a": "x"}]}}], _template("{{a}}")), INPUTS
    )
    assert (
        generation.error is not None
        and "more than one Application named 'x'" in generation.error.message
    )


@pytest.mark.parametrize(
    ("name", "said"),
    [
        (
            "{{.cluster}}-web",
            "its placeholder {{.cluster}} is Go template syntax, which only `goTemplate: true` "
            "reads (fasttemplate leaves it as written)",
        ),
        (
            "{{clustr}}-web",
            "its placeholder {{clustr}} was left as written (the generator's parameters have no "
            "key 'clustr')",
        ),
    ],
)
def test_a_duplicate_name_from_a_placeholder_left_as_written_says_why(name: str, said: str) -> None:
    """argo-helm's argocd-apps CI values (applicationsets-progressive-syncs) name Applications
    '{{.cluster}}-guestbook' in a set without goTemplate: fasttemplate leaves it, as Argo CD
    does, and the error only said the set generated two Applications of that name."""
    elements = [{"cluster": "dev"}, {"cluster": "prod"}]
    generation = generate(_set([{"list": {"elements": elements}}], _template(name)), INPUTS)
    assert generation.error is not None
    assert generation.error.message == (
        f"ApplicationSet generates more than one Application named {name!r}: {said}"
    )


def test_list_elements_yaml_adds_elements() -> None:
    generator = {
        "list": {"elements": [{"env": "qa"}], "elementsYaml": "- env: live\n- env: perf\n"}
    }
    assert _names(generate(_set([generator], _template("{{.env}}"), **GO), INPUTS)) == [
        "qa",
        "live",
        "perf",
    ]


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ({"generators": "list", "template": {}}, "spec.generators"),
        ({"generators": ["list"], "template": _template("x")}, "spec.generators[0]"),
        (
            {"generators": [{"list": {"elements": "x"}}], "template": _template("x")},
            "spec.generators[0].list.elements",
        ),
        (
            {"generators": [{"list": {"elements": [1]}}], "template": _template("x")},
            "spec.generators[0].list.elements[0]",
        ),
        (  # Argo CD reads a generator's own template inside its kind only
            {
                "generators": [{"list": {"elements": [{}]}, "template": _template("y")}],
                "template": _template("x"),
            },
            "spec.generators[0].template",
        ),
        (  # ... and its values too: beside the kind Argo CD never sees them
            {
                "generators": [{"clusters": {}, "values": {"stage": "live"}}],
                "template": _template("x"),
            },
            "spec.generators[0].values",
        ),
        (
            {
                "generators": [{"matrix": {"generators": [{"list": {}}]}}],
                "template": _template("x"),
            },
            "spec.generators[0].matrix.generators",
        ),
        (
            {
                "generators": [],
                "template": _template("x"),
                "syncPolicy": {"applicationsSync": "always"},
            },
            "spec.syncPolicy.applicationsSync",
        ),
        (
            {
                "generators": [{"git": {"repoURL": REPO, "directories": "apps/*"}}],
                "template": _template("x"),
            },
            "spec.generators[0].git",
        ),
    ],
)
def test_a_malformed_set_is_a_generation_error_never_a_crash(
    spec: dict[str, Any], field: str
) -> None:
    generation = generate({"metadata": {"name": "s", "namespace": "argocd"}, "spec": spec}, INPUTS)
    assert generation.error is not None and generation.apps == ()
    assert ".".join(str(p) for p in generation.error.path).startswith(
        field.replace("[", ".").replace("]", "")
    ), generation.error


def test_a_template_inside_the_generator_kind_overrides_the_set_template() -> None:
    """Argo CD reads a generator's own template inside its kind (`list.template`); before,
    Headway read it only beside the kind and ignored Argo's place."""
    own = {"metadata": {"name": "own-{{.env}}"}}
    generator = {"list": {"elements": [{"env": "dev"}], "template": own}}
    generation = generate(_set([generator], _template("set-{{.env}}"), **GO), INPUTS)
    assert _names(generation) == ["own-dev"]
    assert generation.apps[0].manifest["spec"]["project"] == "default"  # filled from the set
