"""`headway explain`: the story of an object's last operation, in plain words. Purely
computational: the CLI reads the objects, their Events and the decision journal
(`headway.decisions`) and hands them here; `story` is the result, `rollout_story` and
`app_story` write it."""
