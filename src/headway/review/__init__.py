"""What a change to a GitOps repository does, before it merges. Purely computational.

`headway diff BASE..HEAD` (the CLI) renders every affected Application at both revisions and
hands the renders here: `changes` compares them resource by resource with the live diff's
normalization and ignoreDifferences, `sync_preview` plans the sync HEAD would start against
BASE's objects (waves, hooks, prunes), `findings` marks which check findings the change
introduced, and `model` holds the result every output format is written from.
"""
