"""The web dashboard `headway serve --ui-port` serves: Applications, Rollouts (with their
AnalysisRuns charted) and, later, Promotions; live through server-sent events fed by the
store's watch; read-only without a login, actions behind the dashboard token and a CSRF
token. See docs/dashboard.md.

Everything shown is read the way the CLI reads it (`headway.steering`), and every action
calls the function the CLI's command calls.
"""
