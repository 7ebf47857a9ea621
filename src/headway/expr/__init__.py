"""The analysis condition language (expr-lang syntax as Argo Rollouts uses it). No I/O."""
