"""Argo's own test tables, run against Headway's real code paths: `scripts/conformance`.

    scripts/conformance ARGO_CD_DIR ARGO_ROLLOUTS_DIR [--expr-lang EXPR_DIR] [--differences]

reads the tables from local checkouts of those repositories — nothing of them is copied into
Headway — and prints how many cases of each table Headway answers as Argo does:

* Argo CD: every `resource_customizations/<group>/<Kind>/health_test.yaml`, each case's object
  assessed by Headway's health registry with that directory's `health.lua` (argo_cd_health);
* Argo Rollouts: the condition cases of `utils/evaluate/evaluate_test.go` (`EvalCondition` and
  `EvaluateResult` with literal arguments), evaluated by `headway.analysis.measurement`
  (argo_rollouts_conditions), and the `TestAssessMetric*` cases of
  `analysis/analysis_test.go`, assessed by `headway.analysis.assessment`
  (argo_rollouts_assessment);
* with `--expr-lang EXPR_DIR`, expr-lang's `builtin/builtin_test.go` tables, evaluated by
  `headway.expr` (expr_lang_builtins).

Run it after each Argo release to see what changed.
"""
