"""ApplicationSet generation, purely computational: generator parameters from inputs, the
template rendered once per parameter set, and the decisions of the controller (what to
create, update and delete under a sync policy; RollingSync's steps; the status conditions).

The controller (`headway.controllers.appset.controller`) reads Git and cluster Secrets and
hands them in through `generators.Inputs`; nothing here does I/O. docs/applicationset.md is
the user's page.
"""
