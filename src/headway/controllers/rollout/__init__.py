"""The Rollout controller (Argo Rollouts' reconcile), one step per call for one Rollout.

`inputs` reads what a reconcile needs and builds the frozen context, `headway.rollout`
decides the plan, `actions` carries it out in Argo's order, `workload` reads and scales a
`workloadRef` Deployment, and `controller` is the step.
"""
