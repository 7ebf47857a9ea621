"""Promotion: move an image through a pipeline's environments by commits, behind gates that
fail closed (docs/promotion.md).

Pure parts (no I/O): `lifecycle`, `approval`, `live` and `record` (the state machine and its
verdicts); `yaml_edits` and `image_targets` (round-trip edits of the files a pipeline writes),
`classify` (is a change only automation keys, or config?), `trailers` (the structured commit
message). Edges: `git_writer` (commits through pygit2) and `forge` / `github` (pull requests
and approval comments over HTTP). The pipeline file itself is a manifest kind,
`headway.model.promotion_pipeline`, so `headway validate` checks it.
"""
