"""The Go template subset notification templates are written in."""

from __future__ import annotations

import pytest

from headway.notify.gotemplate import REPO_FUNCTIONS, TemplateError, parse_template

APP = {
    "metadata": {"name": "guestbook"},
    "spec": {"source": {"repoURL": "git@github.com:team/guestbook.git"}},
    "status": {
        "sync": {"status": "OutOfSync"},
        "conditions": [{"type": "SyncError", "message": "boom"}, {"type": "Warn", "message": "x"}],
    },
}


def render(text: str, **data: object) -> str:
    return parse_template("t", text).render({"app": APP, "repo": REPO_FUNCTIONS, **data})


def test_field_paths_and_missing_keys_read_as_go_prints_them() -> None:
    assert render("{{.app.metadata.name}} / {{ .app.status.sync.status }}") == (
        "guestbook / OutOfSync"
    )
    assert render("{{.app.status.operationState.phase}}") == "<no value>"


def test_if_else_if_else_and_comparisons() -> None:
    text = '{{if eq .app.status.sync.status "Synced"}}in sync{{else if .app.missing}}?' \
        "{{else}}drifted{{end}}"
    assert render(text) == "drifted"
    assert render("{{if not .app.missing}}none{{end}}") == "none"


def test_range_with_index_and_value_and_trim_markers() -> None:
    text = "{{range $i, $c := .app.status.conditions -}}\n  {{if $i}}, {{end}}{{$c.type}}\n" \
        "{{- end}}"
    assert render(text) == "SyncError, Warn"
    assert render("{{range .app.status.nothing}}x{{else}}empty{{end}}") == "empty"


def test_functions_pipes_and_repo_call() -> None:
    assert render("{{ .app.metadata.name | upper }}") == "GUESTBOOK"
    assert render('{{printf "%s is %s" .app.metadata.name .app.status.sync.status}}') == (
        "guestbook is OutOfSync"
    )
    assert render("{{call .repo.RepoURLToHTTPS .app.spec.source.repoURL}}") == (
        "https://github.com/team/guestbook"
    )
    assert render('{{default "n/a" .app.missing}} {{toJson .app.status.sync}}') == (
        'n/a {"status": "OutOfSync"}'
    )


def test_an_action_ends_at_the_first_braces_outside_its_strings() -> None:
    assert render("{{ `{{ .x | toJson }}` }}!") == "{{ .x | toJson }}!"
    assert render('{{ "a}}b" }}-{{ printf "%s}}" .app.metadata.name }}') == "a}}b-guestbook}}"


def test_printf_reads_braces_and_double_percent_as_text() -> None:
    """Go's format has no brace syntax: `{` and `}` print as they are (a single `{` used to
    escape as a Python format error), and `%%` is one `%`."""
    name = ".app.metadata.name"
    assert render(f'{{{{ printf "{{%s}}" {name} }}}}') == "{guestbook}"
    assert render(f'{{{{ printf "%s{{" {name} }}}}') == "guestbook{"
    assert render(f'{{{{ printf "100%% %s" {name} }}}}') == "100% guestbook"


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("{{if .a}}open", "missing {{end}}"),
        ("{{end}}", "unexpected {{end}}"),
        ("{{ frobnicate .a }}", "function 'frobnicate' not defined"),
    ],
)
def test_errors_name_the_template_and_the_action(text: str, names: str) -> None:
    with pytest.raises(TemplateError, match="template t") as err:
        render(text)
    assert names in str(err.value)
