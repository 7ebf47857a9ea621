"""Normalization and comparison of desired and live objects, with ignoreDifferences. No I/O.

`diff_objects` diffs an app; `diff_resource` one object; `compile_rules` turns
`ignoreDifferences` entries into matchers once (`compile_system_rules`: argocd-cm's);
`apply_ignore_rules_to_desired` implements RespectIgnoreDifferences; `render.unified_diff`
formats `headway app diff`.
"""

from headway.diff.app_diff import AppDiff, apply_ignore_rules_to_desired, diff_objects, object_key
from headway.diff.compare import ResourceDiff, diff_resource
from headway.diff.ignore import (
    CompiledRule,
    IgnoreRuleError,
    compile_rules,
    compile_system_rules,
    unmatched_rules,
)
from headway.diff.render import unified_diff

__all__ = [
    "AppDiff",
    "CompiledRule",
    "IgnoreRuleError",
    "ResourceDiff",
    "apply_ignore_rules_to_desired",
    "compile_rules",
    "compile_system_rules",
    "diff_objects",
    "diff_resource",
    "object_key",
    "unified_diff",
    "unmatched_rules",
]
