"""The ApplicationSet controller: generate Applications from a set, admit, create, prune.

`inputs` reads what the generators need (cluster Secrets, Git trees) and `controller`
steps one set with the pure core in `headway.appset`. It sits above the app family: it
admits each generated Application with the app family's AppProject checks.
"""
