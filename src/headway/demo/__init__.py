"""The demo: a Git repository, the local runtime, `headway serve`, three releases and a
summary of what happened, all on this machine (docs/demo.md).

`headway demo` (`headway.cli.demo`) only parses flags and calls `launch.run_demo` or
`launch.stop_kept`. The modules, by what they are for: `layout` (the directory), `repo` (the
Git repository), `processes` (runtime and serve), `traffic` (the request generator),
`webhook` (the notifications receiver), `observe` (views of the Rollout and the narration),
`waiting` (the one wait-with-deadline), `run` (the stages), `summary` (the closing tables),
`launch` (exit codes, clean-up).
"""
