"""argocd-cm's diff customizations are read as Argo CD reads them, and bad ones named at their line.

Before: `resource.customizations.ignoreDifferences.*`, the block form's `ignoreDifferences`
and `resource.compareoptions` were only named as ignored, so an installation whose argocd-cm
ignored `/spec/replicas` everywhere saw its apps OutOfSync forever under Headway.
"""

from __future__ import annotations

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from headway.model.argocd_diff import (
    CompareOptions,
    StatusScope,
    SystemIgnore,
    diff_customizations,
)
from headway.model.diagnostics import Severity
from headway.model.validate import validate_text

IGNORE = "resource.customizations.ignoreDifferences."


def _rules(data: dict[str, str]) -> list[tuple[str, str, str, tuple[str, ...], tuple[str, ...]]]:
    found = diff_customizations(data)
    assert found.problems == ()
    return [_shape(rule) for rule in found.ignores]


def _shape(rule: SystemIgnore) -> tuple[str, str, str, tuple[str, ...], tuple[str, ...]]:
    entry = rule.entry
    return (rule.override, entry.group, entry.kind, entry.json_pointers,
            entry.managed_fields_managers)  # fmt: skip


def test_split_keys_name_group_and_kind_as_argo_cd_splits_them() -> None:
    data = {
        IGNORE + "apps_Deployment": "jsonPointers:\n- /spec/replicas\n",
        IGNORE + "admissionregistration.k8s.io_MutatingWebhookConfiguration":
            "jqPathExpressions:\n- '.webhooks[]?.clientConfig.caBundle'\n",
        IGNORE + "ConfigMap": "jsonPointers: [/data/generated]\n",
        IGNORE + "all": "managedFieldsManagers: [kube-controller-manager]\n",
    }  # fmt: skip
    assert _rules(data) == [
        ("apps/Deployment", "apps", "Deployment", ("/spec/replicas",), ()),
        ("admissionregistration.k8s.io/MutatingWebhookConfiguration",
         "admissionregistration.k8s.io", "MutatingWebhookConfiguration", (), ()),
        ("ConfigMap", "", "ConfigMap", ("/data/generated",), ()),
        ("*/*", "*", "*", (), ("kube-controller-manager",)),
    ]  # fmt: skip
    hook = diff_customizations(data).ignores[1].entry
    assert hook.jq_path_expressions == (".webhooks[]?.clientConfig.caBundle",)


BLOCK = """\
apps/Deployment:
  ignoreDifferences: |
    jsonPointers:
    - /spec/template/metadata/annotations
"*.crossplane.io/*":
  health.lua: return {}
  ignoreDifferences: |
    jsonPointers: [/spec/forProvider]
"""


def test_the_older_block_form_is_read_and_a_split_key_replaces_its_rule() -> None:
    assert _rules({"resource.customizations": BLOCK}) == [
        ("apps/Deployment", "apps", "Deployment", ("/spec/template/metadata/annotations",), ()),
        ("*.crossplane.io/*", "*.crossplane.io", "*", ("/spec/forProvider",), ()),
    ]
    data = {"resource.customizations": BLOCK, IGNORE + "apps_Deployment": "jsonPointers: [/x]"}
    assert _rules(data)[0] == ("apps/Deployment", "apps", "Deployment", ("/x",), ())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (None, CompareOptions()),
        ("", CompareOptions()),
        ("ignoreAggregatedRoles: true", CompareOptions(ignore_aggregated_roles=True)),
        ("ignoreResourceStatusField: crd", CompareOptions(ignore_status=StatusScope.CRD)),
        ("ignoreResourceStatusField: none", CompareOptions(ignore_status=StatusScope.NONE)),
        # YAML reads `off` and `false` as a boolean; Argo CD accepts both for none
        ("ignoreResourceStatusField: off", CompareOptions(ignore_status=StatusScope.NONE)),
        ("ignoreResourceStatusField: 'false'", CompareOptions(ignore_status=StatusScope.NONE)),
        ("ignoreResourceStatusField: all", CompareOptions(ignore_status=StatusScope.ALL)),
        (
            "ignoreDifferencesOnResourceUpdates: false",
            CompareOptions(ignore_differences_on_resource_updates=False),
        ),
    ],
)
def test_compare_options_and_argo_cd_3_defaults(text: str | None, expected: CompareOptions) -> None:
    data = {} if text is None else {"resource.compareoptions": text}
    found = diff_customizations(data)
    assert (found.compare, found.problems) == (expected, ())


def test_an_unknown_status_scope_ignores_every_status_with_a_warning() -> None:
    found = diff_customizations({"resource.compareoptions": "ignoreResourceStatusField: crds"})
    assert found.compare.ignore_status is StatusScope.ALL
    (problem,) = found.problems
    assert not problem.error
    assert "'crds' is not all, crd or none" in problem.message


ARGOCD_CM = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
data:
  resource.customizations.ignoreDifferences.apps_Deployment: |
    jsonPointers:
    - spec/replicas
  resource.customizations.ignoreDifferences.all: |
    jqPathExpressions:
    - .metadata.labels[
  resource.customizations.ignoreDifferences.Service: |
    managedFieldsManagers: [kube-controller-manager]
  resource.customizations.ignoreDifferences.apps_Stateful_Set: |
    jsonPointers: [/spec/replicas]
  resource.customizations.ignoreDiferences.apps_ReplicaSet: |
    jsonPointers: [/spec/replicas]
  resource.customizations.ignoreDifferences.batch_Job: |
    jsonPointers: /spec/parallelism
  resource.compareoptions: |
    ignoreAggregatedRoles: yes please
"""


def test_validate_names_each_malformed_rule_at_its_key_and_line() -> None:
    report = validate_text(ARGOCD_CM, "argocd-cm.yaml")
    found = [(d.line, d.field.removeprefix("data[").strip('"]'), d.severity)
             for d in report.diagnostics]  # fmt: skip
    assert found == [
        (6, IGNORE + "apps_Deployment", Severity.ERROR),
        (9, IGNORE + "all", Severity.ERROR),
        (12, IGNORE + "Service", Severity.WARNING),
        (14, IGNORE + "apps_Stateful_Set", Severity.ERROR),
        (16, "resource.customizations.ignoreDiferences.apps_ReplicaSet", Severity.ERROR),
        (18, IGNORE + "batch_Job", Severity.ERROR),
        (20, "resource.compareoptions", Severity.ERROR),
    ]
    messages = [d.message for d in report.diagnostics]
    assert messages[0] == (
        'jsonPointers: "spec/replicas" is not a JSON pointer (it must start with "/")'
    )
    assert messages[1].startswith("jqPathExpressions: '.metadata.labels[' does not compile: jq:")
    assert "looks them up as `/Service`" in messages[2] and f"`{IGNORE}_Service`" in messages[2]
    assert messages[3].startswith("'apps_Stateful_Set' is not <group>_<kind> or <kind>")
    assert messages[4].startswith("'ignoreDiferences' is not a customization Argo CD knows")
    assert messages[5] == "jsonPointers: expected a list of strings"
    assert messages[6] == "ignoreAggregatedRoles: expected true or false"
    assert str(report.diagnostics[0]).startswith(
        f'argocd-cm.yaml:6: ConfigMap/argocd-cm: data["{IGNORE}apps_Deployment"]: '
    )


def test_a_block_entry_that_is_not_text_is_an_error_naming_the_entry() -> None:
    block = "apps/Deployment:\n  ignoreDifferences:\n    jsonPointers: [/spec/replicas]\n"
    (problem,) = diff_customizations({"resource.customizations": block}).problems
    assert (problem.key, problem.error) == ("resource.customizations", True)
    assert problem.message.startswith("apps/Deployment: expected a YAML text")


@pytest.mark.parametrize("entry", ["[1]", "ignoreDifferences", "'jsonPointers: [/spec/replicas]'"])
def test_a_block_entry_that_is_not_a_mapping_is_an_error_naming_it(entry: str) -> None:
    """Argo CD cannot read such a block (a ResourceOverride is a mapping) and compares no
    application; before, Headway skipped the entry and compared without its rule."""
    block = f"apps/Deployment: {entry}\nbatch/Job:\n  ignoreDifferences: |\n    jsonPointers: []\n"
    (problem,) = diff_customizations({"resource.customizations": block}).problems
    assert (problem.key, problem.error) == ("resource.customizations", True)
    assert problem.message.startswith("apps/Deployment: expected a mapping")


def test_an_unknown_field_of_a_rule_is_a_warning_naming_it() -> None:
    found = diff_customizations({IGNORE + "all": "jsonPointer: [/spec/replicas]"})
    (problem,) = found.problems
    assert not problem.error and problem.message.startswith("jsonPointer: not a field")
    assert [rule.entry.json_pointers for rule in found.ignores] == [()]


_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=20))
_FIELDS = st.one_of(st.sampled_from([
    "jsonPointers", "jqPathExpressions", "managedFieldsManagers", "ignoreDifferences",
    "ignoreResourceStatusField", "ignoreAggregatedRoles", "ignoreDifferencesOnResourceUpdates",
    "apps/Deployment",
]), st.text(max_size=8))  # fmt: skip
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(_FIELDS, inner, max_size=3)),
    max_leaves=8,
)  # fmt: skip
_KEYS = st.sampled_from([
    IGNORE + "all", IGNORE + "apps_Deployment", IGNORE + "a_b_c", "resource.compareoptions",
    "resource.customizations", "resource.customizations.health.x_Y", "resource.customizations.x.y",
])  # fmt: skip


@settings(max_examples=300, deadline=None)
@example({"resource.compareoptions": "ignoreResourceStatusField: [crd]"})
@example({"resource.compareoptions": {"ignoreAggregatedRoles": True}})
@example({IGNORE + "all": ["jsonPointers"], "resource.customizations": "a/B: [1]"})
@given(st.dictionaries(_KEYS, st.one_of(_VALUES, _VALUES.map(yaml.safe_dump)), max_size=4))
def test_no_argocd_cm_data_raises(data: dict[str, object]) -> None:
    """Whatever the data (YAML texts of any shape, or values that are not text at all), the
    reader answers with rules and problems, never an exception."""
    found = diff_customizations(data)
    assert all(p.key in data for p in found.problems)
