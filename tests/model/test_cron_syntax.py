"""`cron_syntax.known_verdict` may only answer where croniter gives the same answer: the
AppProject check skips croniter when it answers, so a yes croniter would refuse would let a
bad sync window through, and a no it would accept would refuse a good one. Checked against
croniter itself on schedules near every edge of the plain form (bounds, steps, reversed
ranges, spacing, names and specials) and of the column count (blanks, aliases)."""

from __future__ import annotations

import pytest
from croniter import croniter
from hypothesis import given, settings
from hypothesis import strategies as st
from model_helpers import document, rendered

from headway.model import cron_syntax
from headway.model.appproject import parse_appproject
from import_probe import run_python

_BOUNDS = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 7))  # croniter's own (7: Sunday too)
_ODD_SPAN = st.sampled_from(["L", "?", "mon", "jan", "1#2", "5L", "", "-", "1-", "*-1", "٣", "+1"])


def _number(low: int, high: int) -> st.SearchStrategy[str]:
    """A field's numbers, often just inside or outside its bounds, sometimes zero-padded."""
    edges = st.sampled_from([low - 1, low, high, high + 1, 99]).filter(lambda n: n >= 0)
    number = st.integers(min_value=low, max_value=high) | edges
    return number.map(str) | number.map("{:02d}".format) | st.sampled_from(["100", "007"])


def _field(low: int, high: int) -> st.SearchStrategy[str]:
    number = _number(low, high)
    span = st.one_of(st.just("*"), number, st.tuples(number, number).map("-".join), _ODD_SPAN)
    step = st.none() | st.none() | number | st.sampled_from(["", "0", "*", "60", "61"])
    item = st.tuples(span, step).map(lambda p: p[0] if p[1] is None else f"{p[0]}/{p[1]}")
    return st.lists(item, min_size=1, max_size=3).map(",".join)


# Mostly the plain form's shape (five fields, one space apart), so that many are plain.
_SCHEDULE = st.tuples(
    st.tuples(*(_field(low, high) for low, high in _BOUNDS)),
    st.sampled_from([(), (), (), ("*",), ("0", "2030")]),
    st.sampled_from([" ", " ", " ", "  ", "\t"]),
    st.sampled_from([None, None, None, 4]),  # or only four fields
).map(lambda parts: parts[2].join([*parts[0], *parts[1]][: parts[3]]))


def _items(low: int, high: int) -> list[str]:
    """One field's candidates: every number to 100 (plain and padded), ranges and steps
    between the values around its bounds, and what the plain form does not cover."""
    numbers = [str(n) for n in range(101)] + [f"{n:02d}" for n in range(10)] + ["007"]
    edges = [str(n) for n in sorted({low - 1, low, low + 1, high - 1, high, high + 1}) if n >= 0]
    ranges = [f"{a}-{b}" for a in edges for b in edges]
    steps = ["", "0", "1", "2", str(high), str(high + 1), "60", "99", "100", "*"]
    stepped = [f"{span}/{step}" for span in ["*", *edges, *ranges[:6]] for step in steps]
    odd = ["*", "", "L", "?", "mon", "jan", "1#2", "5L", "-", "1-", "*-1", "٣", "+1", "1,", ","]
    return numbers + ranges + stepped + odd + [f"{a},{b}" for a in edges for b in edges]


@pytest.mark.parametrize("position", range(5), ids=["minute", "hour", "dom", "month", "dow"])
def test_each_field_is_plain_only_where_croniter_accepts_it(position: int) -> None:
    """Every candidate in one field, `*` in the others: each yes is croniter's yes."""
    plain = 0
    for item in _items(*_BOUNDS[position]):
        fields = ["*"] * 5
        fields[position] = item
        schedule = " ".join(fields)
        if cron_syntax.known_verdict(schedule) is not None:
            plain += 1
            assert croniter.is_valid(schedule) == cron_syntax.known_verdict(schedule), schedule
    assert plain > 20  # the plain form is exercised, not only refused


@settings(max_examples=500, deadline=None)
@given(_SCHEDULE)
def test_a_generated_schedules_verdict_is_croniters(schedule: str) -> None:
    verdict = cron_syntax.known_verdict(schedule)
    if verdict is not None:
        assert croniter.is_valid(schedule) == verdict, schedule


_TOKENS = ["*", "0", "every", "friday", "@daily", "@DAILY", "@weekly", "@", "٣", "L", ""]
_BLANKS = [" ", "  ", "\t", "\n", "\r", "\x0b", "\x0c", "\xa0", "\u2003", " \xa0 "]


@pytest.mark.parametrize("count", range(10))
def test_a_verdict_on_the_column_count_is_croniters(count: int) -> None:
    """Texts of 0-9 tokens joined by ASCII and other blanks, with and without aliases: each
    refusal is croniter's refusal."""
    refused = 0
    for token in _TOKENS:
        for blank in _BLANKS:
            for edge in ("", " ", "\t"):
                schedule = edge + blank.join([token] * count) + edge
                verdict = cron_syntax.known_verdict(schedule)
                if verdict is not None:
                    refused += verdict is False
                    assert croniter.is_valid(schedule) == verdict, repr(schedule)
    assert refused > 0 or count in (5, 6, 7)


@pytest.mark.parametrize(
    "schedule",
    [
        "0 22 * * 5",
        "*/15 9-17 * * 1-5",
        "0,30 0-23/2 1-31 1-12 0-6",
        "07 00 01 01 00",
        "5/15 * * * *",
    ],
)
def test_common_schedules_are_plain(schedule: str) -> None:
    assert cron_syntax.known_verdict(schedule) is True
    assert croniter.is_valid(schedule)


@pytest.mark.parametrize(
    "schedule",
    ["0 0 * * 7", "@daily", "0 0 L * *", "0  0 * * *", "0 0 * * * *", "*/0 * * * *", "0 24 * * *"],
)
def test_anything_else_is_left_to_croniter(schedule: str) -> None:
    assert cron_syntax.known_verdict(schedule) is None


_PROJECT = """\
apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: shop}
spec:
  sourceRepos: ["*"]
  destinations: [{server: "*", namespace: "*"}]
  syncWindows:
    - {kind: deny, schedule: "SCHEDULE", duration: 1h, applications: ["*"]}
"""


@pytest.mark.parametrize(
    ("schedule", "errors"),
    [
        ("0 22 * * 5", []),
        ("0 0 * * 7", []),  # not plain: croniter accepts it
        ("0 24 * * *", ['m.yaml:8: AppProject/shop: spec.syncWindows[0].schedule: "0 24 * * *"']),
        (
            "every friday",
            ['m.yaml:8: AppProject/shop: spec.syncWindows[0].schedule: "every friday"'],
        ),
    ],
)
def test_a_projects_schedule_is_judged_as_croniter_judges_it(
    schedule: str, errors: list[str]
) -> None:
    _, diagnostics = parse_appproject(document(_PROJECT.replace("SCHEDULE", schedule)))
    assert [line.split(" is not")[0] for line in rendered(diagnostics)] == errors


@pytest.mark.parametrize("schedule", ["0 22 * * 5", "every friday"])
def test_a_project_with_a_schedule_known_here_does_not_import_croniter(schedule: str) -> None:
    probe = run_python(
        "import sys\n"
        "from headway.model import appproject, yamlload\n"
        "(document,) = yamlload.load_documents(sys.argv[1], 'p.yaml').documents\n"
        "report = {'errors': len(appproject.parse_appproject(document)[1])}\n",
        _PROJECT.replace("SCHEDULE", schedule),
    )
    assert probe.report == {"errors": 0 if schedule[0].isdigit() else 1}
    assert probe.loaded(["croniter", "dateutil."]) == []
