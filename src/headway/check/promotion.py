"""Rules on `PromotionPipeline` files (docs/promotion.md): the environment that reaches
production is gated by a person, and every environment names an Application the repository
defines. Purely computational, over the loaded documents."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from headway.check.context import CheckContext
from headway.check.findings import Finding, Rule, Severity, finding_at
from headway.check.manifest import as_dict, as_list, group_of, name_of
from headway.model.promotion_pipeline import PIPELINE_GROUP, PIPELINE_KIND
from headway.model.yamlload import Document

__all__ = [
    "PIPELINE_UNKNOWN_APPLICATION",
    "UNGATED_LAST_ENVIRONMENT",
    "check_pipeline_applications",
    "check_pipeline_gates",
]

UNGATED_LAST_ENVIRONMENT = Rule(
    id="HW501",
    slug="ungated-last-environment",
    severity=Severity.WARNING,
    title="A promotion pipeline whose last environment needs no approval",
    rationale="Seed 002 §3.5, §6: a prod promotion requires an explicit, fail-closed human "
    "approval; a pipeline that auto-promotes into its last environment ships whatever passed "
    "the one before, with nobody deciding.",
    hint="Give the last environment `gate: {approval: {required: true, approvers: [...]}}`; "
    "if it really may go unattended (a preview, a low-risk frontend), say so with "
    '`headway.dev/check-disable: "HW501: <reason>"` on the pipeline.',
)
PIPELINE_UNKNOWN_APPLICATION = Rule(
    id="HW502",
    slug="pipeline-unknown-application",
    severity=Severity.ERROR,
    title="A promotion pipeline environment names an Application the repository does not define",
    rationale="A promotion waits for its environment's Application to run the image and be "
    "Healthy; one that does not exist never becomes Healthy, so every promotion there fails "
    "at its deadline and re-commits the previous image.",
    hint="Fix `application:` (and `applicationNamespace:`) to name an Application defined in "
    "this repository.",
)


def _pipelines(ctx: CheckContext) -> Iterator[Document]:
    for doc in ctx.objects_of_kind(PIPELINE_KIND):
        if group_of(as_dict(doc.obj).get("apiVersion")) == PIPELINE_GROUP:
            yield doc


def check_pipeline_gates(ctx: CheckContext) -> Iterable[Finding]:
    for doc in _pipelines(ctx):
        environments = as_list(as_dict(as_dict(doc.obj).get("spec")).get("environments"))
        if not environments:
            continue
        last = as_dict(environments[-1])
        approval = as_dict(as_dict(last.get("gate")).get("approval"))
        if approval.get("required") is True:
            continue
        index = len(environments) - 1
        yield finding_at(
            UNGATED_LAST_ENVIRONMENT,
            doc,
            path=("spec", "environments", index),
            message=f"PromotionPipeline/{name_of(doc.obj)}: environment "
            f"{last.get('name')!r} is the last one and needs no approval",
        )


def check_pipeline_applications(ctx: CheckContext) -> Iterable[Finding]:
    defined = {name_of(app.obj) for _, app in ctx.application_documents()}
    if not defined:
        return  # Applications made elsewhere (Terraform, an ApplicationSet): nothing to compare
    for doc in _pipelines(ctx):
        environments = as_list(as_dict(as_dict(doc.obj).get("spec")).get("environments"))
        for index, raw in enumerate(environments):
            application = as_dict(raw).get("application")
            if not isinstance(application, str) or application in defined:
                continue
            yield finding_at(
                PIPELINE_UNKNOWN_APPLICATION,
                doc,
                path=("spec", "environments", index, "application"),
                message=f"PromotionPipeline/{name_of(doc.obj)}: no Application {application!r} "
                "in this repository",
            )
