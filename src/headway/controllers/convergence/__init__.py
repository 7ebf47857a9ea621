"""Git convergence: when a Rollout aborts, the revert of its image change is committed.

`facts` reads what failed from the cluster, `revert` writes the revert commit(s), `git`
opens the branch it goes to, `record` keeps the outcome on the Rollout so a restart does
not repeat it, and `controller` steps one aborted Rollout.
"""
