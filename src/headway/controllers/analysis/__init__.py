"""The AnalysisRun controller: one measurement step per call for one run.

`args` makes a run ready to measure (arguments, metrics, policies), `measure` turns a
provider's answer into a recorded measurement, `status` reads and writes the run's status,
and `controller` steps the run with the pure core in `headway.analysis`.
"""
