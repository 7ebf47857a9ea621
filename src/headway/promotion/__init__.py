"""Promotion: move an image through a pipeline's environments by commits, behind gates that
fail closed (docs/promotion.md).

Pure parts (no I/O): `lifecycle`, `approval`, `live` and `record` (the state machine and its
verdicts); `yaml_edits` and `image_targets` (round-trip edits of the files a pipeline writes),
`classify` (is a change only automation keys, or config?), `trailers` (reading a promotion
commit's message back), `forge` (the forge protocol and reading decisions from comments).
Edges: `environment_repo` (commits through the Git branch writers), `forge_branch` (commits
through pull requests), `github` and `forge_setup` (GitHub's REST API over HTTP), and the
controller. The pipeline file itself is a manifest kind, `headway.model.promotion_pipeline`,
so `headway validate` checks it.
"""
