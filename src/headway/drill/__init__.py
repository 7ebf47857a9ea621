"""`headway drill`: a rollout's steps replayed against simulated traffic, many times."""
