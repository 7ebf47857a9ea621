"""Headway's `PromotionPipeline` (`headway.dev/v1alpha1`): one app's environments, in order.

A pipeline lives in Git beside the Applications it moves an image through. Each environment
names the Application that represents it, where its image is written (a Helm values key, a
Kustomize `images:` entry, or a field of a plain manifest), its gate (approval, approvers,
timeout, and which automation-written keys may change without the gate), whether a success
there starts the next environment, and how long "live and Healthy" may take.

The group is Headway's own (`headway.dev`, as its annotations are), not `argoproj.io`: Argo has
no such kind, and a repository must not seem to declare something Argo would run. The version
is `v1alpha1` because the schema may still change incompatibly. docs/promotion.md is the
reference. Purely computational: the table validates and builds frozen views.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from headway.model import k8s
from headway.model import schema as s
from headway.model.diagnostics import Diagnostic
from headway.model.key_paths import KeyPath, KeyPathError, ListMatch, parse_key_path
from headway.model.views import view
from headway.model.yamlload import Document

__all__ = [
    "PIPELINE_GROUP",
    "PIPELINE_KIND",
    "PIPELINE_SPEC",
    "PIPELINE_VERSION",
    "Approval",
    "Environment",
    "ForgeSettings",
    "Gate",
    "GitHubSettings",
    "Hotfix",
    "ImageTarget",
    "PromotionPipeline",
    "PromotionPipelineSpec",
    "SecretKey",
    "TargetKind",
    "parse_promotion_pipeline",
]

PIPELINE_GROUP = "headway.dev"
PIPELINE_VERSION = "v1alpha1"
PIPELINE_KIND = "PromotionPipeline"

_ENV_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


class TargetKind(StrEnum):
    HELM = "helm"  # a values key holding the tag
    KUSTOMIZE = "kustomize"  # an `images:` entry's newTag
    MANIFEST = "manifest"  # a manifest field holding the whole image reference


@view
class HelmKey:
    key: str
    holds: str = "tag"  # "tag", or "image" for a key written as a whole `repository:tag`


@view
class KustomizeImage:
    name: str


@view
class ManifestField:
    kind: str
    name: str
    field: str


@view
class ImageTarget:
    """Where an environment's image is written: a file and one key in it."""

    file: str
    helm: HelmKey | None
    kustomize: KustomizeImage | None
    manifest: ManifestField | None

    @property
    def kind(self) -> TargetKind:
        if self.helm is not None:
            return TargetKind.HELM
        if self.kustomize is not None:
            return TargetKind.KUSTOMIZE
        return TargetKind.MANIFEST

    @property
    def key(self) -> KeyPath:
        """The key whose value changes on a promotion (inside the manifest, for MANIFEST)."""
        if self.helm is not None:
            return parse_key_path(self.helm.key)
        if self.kustomize is not None:
            return KeyPath(("images", ListMatch("name", self.kustomize.name), "newTag"))
        assert self.manifest is not None
        return parse_key_path(self.manifest.field)

    @property
    def writes_whole_image(self) -> bool:
        """A manifest field, or a values key declared `holds: image`, holds `repo:tag`; any
        other values key, and a Kustomize newTag, the tag only."""
        return self.manifest is not None or (self.helm is not None and self.helm.holds == "image")


@view
class Approval:
    required: bool
    approvers: tuple[str, ...]
    timeout: float  # seconds; no decision by then is a denial


@view
class Gate:
    approval: Approval
    exempt: tuple[str, ...]  # automation-written keys whose sole change skips the approval


@view
class Hotfix:
    """The keys a hotfix sets (skip analysis, and a nonce that forces a new pod template)."""

    skip_analysis_key: str
    nonce_key: str


@view
class Environment:
    name: str
    application: str
    application_namespace: str | None
    target: ImageTarget
    auto_promote: bool
    healthy_within: float  # seconds from the promotion's commit to live and Healthy
    gate: Gate
    hotfix: Hotfix | None

    @property
    def automation_keys(self) -> tuple[KeyPath, ...]:
        """Every key Headway writes in the target file for this environment."""
        keys = [self.target.key]
        if self.hotfix is not None:
            keys.append(parse_key_path(self.hotfix.skip_analysis_key))
            keys.append(parse_key_path(self.hotfix.nonce_key))
        return tuple(keys)

    @property
    def exempt_keys(self) -> tuple[KeyPath, ...]:
        return tuple(parse_key_path(text) for text in self.gate.exempt)


@view
class SecretKey:
    name: str
    key: str


@view
class GitHubSettings:
    api_url: str
    token_secret: SecretKey  # a Secret in the pipeline's namespace holding the API token


@view
class ForgeSettings:
    """Promote through pull requests on a forge (absent: direct commits)."""

    github: GitHubSettings


@view
class PromotionPipelineSpec:
    image: str  # the repository whose tags move, without a tag
    repo_url: str | None  # where the target files live; None: the Applications' repository
    target_revision: str | None  # the branch promotions commit to; None: the Application's
    environments: tuple[Environment, ...]
    forge: ForgeSettings | None


@view
class PromotionPipeline:
    api_version: str
    metadata: k8s.ObjectMeta
    spec: PromotionPipelineSpec
    kind: str = PIPELINE_KIND

    @property
    def name(self) -> str:
        return self.metadata.name or ""

    def environment(self, name: str) -> Environment | None:
        return next((env for env in self.spec.environments if env.name == name), None)

    def next_environment(self, name: str) -> Environment | None:
        names = [env.name for env in self.spec.environments]
        index = names.index(name) if name in names else len(names)
        return self.spec.environments[index + 1] if index + 1 < len(names) else None


# ---- checks -------------------------------------------------------------------------------


def _key_path_ok(value: Any, path: s.Path, report: s.Reporter) -> KeyPath | None:
    if not isinstance(value, str):
        return None
    try:
        return parse_key_path(value)
    except KeyPathError as err:
        report.error(path, str(err))
        return None


def _target_checks(target: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
    chosen = [kind for kind in TargetKind if target.get(kind.value) is not None]
    if len(chosen) != 1:
        said = ", ".join(kind.value for kind in chosen) or "none"
        report.error(path, f"give exactly one of helm, kustomize, manifest (found: {said})")
    file = target.get("file")
    if isinstance(file, str) and (file.startswith("/") or ".." in file.split("/")):
        report.error((*path, "file"), f'"{file}" must be a path inside the repository')
    helm, manifest = target.get("helm"), target.get("manifest")
    if isinstance(helm, Mapping):
        _key_path_ok(helm.get("key"), (*path, "helm", "key"), report)
    if isinstance(manifest, Mapping):
        _key_path_ok(manifest.get("field"), (*path, "manifest", "field"), report)


def _approval_checks(approval: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
    if approval.get("required") and not approval.get("approvers"):
        message = "an approval nobody may give can never pass: list the approvers"
        report.error((*path, "approvers"), message)
    timeout = approval.get("timeout")
    if timeout is not None and _seconds(timeout) <= 0:
        report.error((*path, "timeout"), "must be longer than zero")


def _seconds(value: Any) -> float:
    return float(s.Duration().convert(value))


def _written_keys(env: Mapping[str, Any]) -> set[str]:
    """The text of each key Headway writes for `env` (unreadable ones are reported elsewhere)."""
    texts: list[Any] = []
    target = env.get("target")
    if isinstance(target, Mapping):
        helm, kustomize, manifest = (target.get(k) for k in ("helm", "kustomize", "manifest"))
        texts.append(helm.get("key") if isinstance(helm, Mapping) else None)
        texts.append(manifest.get("field") if isinstance(manifest, Mapping) else None)
        if isinstance(kustomize, Mapping) and isinstance(kustomize.get("name"), str):
            texts.append(str(KeyPath(("images", ListMatch("name", kustomize["name"]), "newTag"))))
    hotfix = env.get("hotfix")
    if isinstance(hotfix, Mapping):
        texts.extend(hotfix.get(field) for field in ("skipAnalysisKey", "nonceKey"))
    keys: set[str] = set()
    for text in texts:
        if not isinstance(text, str):
            continue
        try:
            keys.add(str(parse_key_path(text)))
        except KeyPathError:
            continue
    return keys


def _environment_checks(env: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
    name = env.get("name")
    if isinstance(name, str) and not _ENV_NAME.fullmatch(name):
        report.error((*path, "name"), f'"{name}" must be lower-case letters, digits and "-"')
    within = env.get("healthyWithin")
    if within is not None and _seconds(within) <= 0:
        report.error((*path, "healthyWithin"), "must be longer than zero")
    hotfix = env.get("hotfix")
    if isinstance(hotfix, Mapping):
        for field in ("skipAnalysisKey", "nonceKey"):
            _key_path_ok(hotfix.get(field), (*path, "hotfix", field), report)
    gate = env.get("gate")
    exempt = gate.get("exempt") if isinstance(gate, Mapping) else None
    if not isinstance(exempt, list):
        return
    written = _written_keys(env)
    for index, entry in enumerate(exempt):
        key = _key_path_ok(entry, (*path, "gate", "exempt", index), report)
        if key is not None and str(key) not in written:
            known = ", ".join(sorted(written)) or "none"
            message = (
                f'"{entry}" is not a key Headway writes here ({known}); '
                "a key edited by hand can never skip the gate"
            )
            report.error((*path, "gate", "exempt", index), message)


def _pipeline_checks(spec: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
    image = spec.get("image")
    if isinstance(image, str) and ("@" in image or ":" in image.rsplit("/", 1)[-1]):
        report.error((*path, "image"), f'"{image}" names a tag or digest; give the repository')
    environments = spec.get("environments")
    if not isinstance(environments, list):
        return
    if not environments:
        report.error((*path, "environments"), "a pipeline needs at least one environment")
    _unique(environments, "name", path, report)
    _unique(environments, "application", path, report)
    last = environments[-1] if environments else None
    if isinstance(last, Mapping) and last.get("autoPromote"):
        where = (*path, "environments", len(environments) - 1, "autoPromote")
        report.warning(where, "the last environment has no next one to promote to")


def _unique(environments: list[Any], field: str, path: s.Path, report: s.Reporter) -> None:
    seen: dict[str, int] = {}
    for index, env in enumerate(environments):
        value = env.get(field) if isinstance(env, Mapping) else None
        if not isinstance(value, str):
            continue
        if value in seen:
            message = f'"{value}" is already environment {seen[value]}\'s {field}'
            report.error((*path, "environments", index, field), message)
        seen.setdefault(value, index)


# ---- tables -------------------------------------------------------------------------------

_TARGET = s.Schema(
    "ImageTarget",
    (
        s.Field("file", s.STR, required=True),
        s.Field(
            "helm",
            s.Obj(
                s.Schema(
                    "HelmKey",
                    (
                        s.Field("key", s.STR, required=True),
                        s.Field("holds", s.Enum(("tag", "image")), default="tag"),
                    ),
                    HelmKey,
                )
            ),
        ),
        s.Field(
            "kustomize",
            s.Obj(
                s.Schema("KustomizeImage", (s.Field("name", s.STR, required=True),), KustomizeImage)
            ),
        ),
        s.Field(
            "manifest",
            s.Obj(
                s.Schema(
                    "ManifestField",
                    (
                        s.Field("kind", s.STR, required=True),
                        s.Field("name", s.STR, required=True),
                        s.Field("field", s.STR, required=True),
                    ),
                    ManifestField,
                )
            ),
        ),
    ),
    ImageTarget,
    checks=(_target_checks,),
)
_APPROVAL = s.Schema(
    "Approval",
    (
        s.Field("required", s.BOOL, default=False),
        s.Field("approvers", s.STRING_LIST),
        s.Field("timeout", s.Duration(), default="1h"),
    ),
    Approval,
    checks=(_approval_checks,),
)
_GATE = s.Schema(
    "Gate",
    (s.Field("approval", s.Obj(_APPROVAL), default={}), s.Field("exempt", s.STRING_LIST)),
    Gate,
)
_HOTFIX = s.Schema(
    "Hotfix",
    (
        s.Field("skipAnalysisKey", s.STR, required=True),
        s.Field("nonceKey", s.STR, required=True),
    ),
    Hotfix,
)
_ENVIRONMENT = s.Schema(
    "Environment",
    (
        s.Field("name", s.STR, required=True),
        s.Field("application", s.STR, required=True),
        s.Field("applicationNamespace", s.STR),
        s.Field("target", s.Obj(_TARGET), required=True),
        s.Field("autoPromote", s.BOOL, default=False),
        s.Field("healthyWithin", s.Duration(), default="10m"),
        s.Field("gate", s.Obj(_GATE), default={}),
        s.Field("hotfix", s.Obj(_HOTFIX)),
    ),
    Environment,
    checks=(_environment_checks,),
)
_SECRET_KEY = s.Schema(
    "SecretKeySelector",
    (s.Field("name", s.STR, required=True), s.Field("key", s.STR, required=True)),
    SecretKey,
)
_GITHUB = s.Schema(
    "GitHubForge",
    (
        s.Field("apiURL", s.STR, default="https://api.github.com", attr="api_url"),
        s.Field("tokenSecret", s.Obj(_SECRET_KEY), required=True),
    ),
    GitHubSettings,
)
_FORGE = s.Schema("Forge", (s.Field("github", s.Obj(_GITHUB), required=True),), ForgeSettings)
PIPELINE_SPEC = s.Schema(
    "PromotionPipelineSpec",
    (
        s.Field("image", s.STR, required=True),
        s.Field("repoURL", s.STR),
        s.Field("targetRevision", s.STR),
        s.Field("environments", s.ListOf(s.Obj(_ENVIRONMENT)), required=True),
        s.Field("forge", s.Obj(_FORGE)),
    ),
    PromotionPipelineSpec,
    checks=(_pipeline_checks,),
)


def parse_promotion_pipeline(
    document: Document,
) -> tuple[PromotionPipeline | None, list[Diagnostic]]:
    parts, diagnostics = k8s.parse_typed(document, PIPELINE_SPEC, status=False)
    if parts is None:
        return None, diagnostics
    return PromotionPipeline(parts.api_version, parts.metadata, parts.spec), diagnostics
