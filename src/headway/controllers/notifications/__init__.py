"""Argo CD / Argo Rollouts notifications: decide on each step, deliver in the background.

`controller` watches the objects and queues what the pure core (`headway.notify`) decides,
`delivery` sends the outbox in its own task, and `state` keeps what must survive a restart.
"""
