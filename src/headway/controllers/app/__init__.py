"""The Application controller (Argo CD's application controller), one step per call.

`controller` reconciles one Application: `sources` renders the desired state, `live` reads
what it manages, `refresh` compares them (through `headway.sync.comparison`), `report`
shapes the status, and `operations` keeps the operation and its history; `sync_executor`
and `sync_tasks_io` carry out a sync operation's units; `project`, `deletion`,
`definitions` (`serve --apps`) and `metrics` do what their names say; `steps` runs the
controller inside the manager.
"""
