"""The subset of Go's text/template that Argo notification templates use. Pure.

Supported (docs/notifications.md lists it for users):

* text and actions `{{ ... }}`, with `{{-` / `-}}` trimming the whitespace beside them and
  `{{/* comments */}}`;
* field paths on the dot and on variables: `.app.metadata.name`, `$c.type`, `.`, `$`;
* `if` / `else if` / `else` / `end`, `range PIPE`, `range $x := PIPE`, `range $i, $x := PIPE`,
  `with PIPE` (the dot becomes the value when it is non-empty);
* literals: "strings", `raw strings`, numbers, true, false, nil; parentheses; pipes `a | f`;
* functions: not, and, or, eq, ne, lt, le, gt, ge, len, index, print, printf, upper, lower,
  default, quote, toJson, trim, contains, hasPrefix, hasSuffix, and `call .repo.RepoURLToHTTPS`.

A missing map key is Go's `<no value>` (empty in `if`), also when a path goes through it.
Anything else is a `TemplateError` that names the template and the action.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "NO_VALUE",
    "GoTemplate",
    "TemplateError",
    "TemplateFunction",
    "parse_template",
    "text_of",
    "truth",
]


class TemplateError(ValueError):
    """A template that cannot be parsed or rendered; the message names where."""


class _NoValue:
    def __repr__(self) -> str:
        return "<no value>"


NO_VALUE: Any = _NoValue()

# An action ends at the first `}}` outside its string literals: `{{ `{{ .x }}` }}` prints the
# raw string `{{ .x }}` (how Argo CD's documentation passes templates through to Helm values).
_ACTION = re.compile(
    r"""\{\{(-\s)?((?:"(?:\\.|[^"\\])*"|`[^`]*`|.)*?)(\s-)?\}\}""", re.DOTALL
)
_TOKEN = re.compile(
    r"""\s*(?:(?P<str>"(?:\\.|[^"\\])*"|`[^`]*`)|(?P<punct>:=|[(),|])|(?P<word>[^\s(),|]+))"""
)
_RANGE_VARS = re.compile(r"^(\$\w*)(?:\s*,\s*(\$\w*))?\s*:=\s*(.*)$", re.DOTALL)


#: A template function: called with the evaluator (for `fail`) and the arguments, the piped
#: value last.
TemplateFunction = Callable[[Any, list[Any]], Any]


# ---- the tree ---------------------------------------------------------------------------

@dataclass(frozen=True)
class _Text:
    text: str


@dataclass(frozen=True)
class _Output:
    pipe: str


@dataclass(frozen=True)
class _If:
    branches: tuple[tuple[str, tuple[Any, ...]], ...]  # (condition, body); "" is the else
    kind: str  # "if" or "with"


@dataclass(frozen=True)
class _Range:
    pipe: str
    key_var: str
    value_var: str
    body: tuple[Any, ...]
    else_body: tuple[Any, ...]


@dataclass(frozen=True)
class GoTemplate:
    """A parsed template; `render(data)` returns the text."""

    name: str
    nodes: tuple[Any, ...]

    def render(
        self,
        data: Mapping[str, Any],
        *,
        missing_key_error: bool = False,
        functions: Mapping[str, TemplateFunction] | None = None,
    ) -> str:
        """The text for `data`. `missing_key_error` is Go's `missingkey=error` option (a
        missing map key fails instead of printing `<no value>`); `functions` add to or
        replace the built-in ones (the ApplicationSet renderer adds its Sprig subset)."""
        out: list[str] = []
        table = {**_FUNCTIONS, **functions} if functions else _FUNCTIONS
        renderer = _Renderer(self.name, out, _Options(missing_key_error, table))
        renderer.run(self.nodes, data, {"$": data})
        return "".join(out)


def parse_template(name: str, text: str) -> GoTemplate:
    """Parse `text`; a `TemplateError` names `name` and the offending action."""
    parts = _split(text)
    nodes, stop, _ = _Parser(name, parts).block(0, ())
    if stop is not None:
        raise TemplateError(f"template {name}: unexpected {{{{{stop}}}}}")
    return GoTemplate(name, nodes)


def _split(text: str) -> list[tuple[str, str]]:
    """The template as ("text", s) and ("action", s) parts, trimming done."""
    parts: list[tuple[str, str]] = []
    pos = 0
    for match in _ACTION.finditer(text):
        chunk = text[pos:match.start()]
        if match.group(1):
            chunk = chunk.rstrip()
        parts.append(("text", chunk))
        parts.append(("action", match.group(2).strip()))
        pos = match.end()
        if match.group(3):
            rest = text[pos:]
            pos += len(rest) - len(rest.lstrip())
    parts.append(("text", text[pos:]))
    return [(kind, s) for kind, s in parts if kind == "action" or s]


class _Parser:
    def __init__(self, name: str, parts: list[tuple[str, str]]) -> None:
        self._name = name
        self._parts = parts

    def block(self, i: int, stops: tuple[str, ...]) -> tuple[tuple[Any, ...], str | None, int]:
        """Nodes from part `i` up to a stop word; returns (nodes, stop action, next index)."""
        nodes: list[Any] = []
        while i < len(self._parts):
            kind, body = self._parts[i]
            i += 1
            if kind == "text":
                nodes.append(_Text(body))
                continue
            word = body.split(None, 1)[0] if body else ""
            if body.startswith("/*"):
                continue
            if word in stops or (word == "else" and "else" in stops):
                return tuple(nodes), body, i
            if word in ("if", "with"):
                branch, i = self._conditional(word, body[len(word):].strip(), i)
                nodes.append(branch)
            elif word == "range":
                loop, i = self._range(body[5:].strip(), i)
                nodes.append(loop)
            elif word in ("end", "else"):
                raise TemplateError(f"template {self._name}: unexpected {{{{{body}}}}}")
            else:
                nodes.append(_Output(body))
        if stops:
            raise TemplateError(f"template {self._name}: missing {{{{end}}}}")
        return tuple(nodes), None, i

    def _conditional(self, kind: str, condition: str, i: int) -> tuple[_If, int]:
        branches: list[tuple[str, tuple[Any, ...]]] = []
        while True:
            body, stop, i = self.block(i, ("end", "else"))
            branches.append((condition, body))
            assert stop is not None
            if stop == "end":
                return _If(tuple(branches), kind), i
            rest = stop[4:].strip()
            if rest.startswith("if ") or rest.startswith("with "):
                condition = rest.split(None, 1)[1]
            else:
                else_body, _, i = self.block(i, ("end",))
                branches.append(("", else_body))
                return _If(tuple(branches), kind), i

    def _range(self, spec: str, i: int) -> tuple[_Range, int]:
        key_var = value_var = ""
        found = _RANGE_VARS.match(spec)
        if found:
            first, second, spec = found.group(1), found.group(2), found.group(3)
            key_var, value_var = (first, second) if second else ("", first)
        body, stop, i = self.block(i, ("end", "else"))
        else_body: tuple[Any, ...] = ()
        if stop is not None and stop.startswith("else"):
            else_body, _, i = self.block(i, ("end",))
        return _Range(spec, key_var, value_var, body, else_body), i


# ---- rendering --------------------------------------------------------------------------

def _truth(value: Any) -> bool:
    if value is NO_VALUE or value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float | str | Sequence | Mapping):
        return bool(value)
    return True


def _text_of(value: Any) -> str:
    if value is NO_VALUE:
        return "<no value>"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, Mapping):
        inner = " ".join(f"{k}:{_text_of(v)}" for k, v in sorted(value.items()))
        return f"map[{inner}]"
    if isinstance(value, list | tuple):
        return "[" + " ".join(_text_of(v) for v in value) + "]"
    return str(value)


@dataclass(frozen=True)
class _Options:
    missing_key_error: bool
    functions: Mapping[str, TemplateFunction]


class _Renderer:
    def __init__(self, name: str, out: list[str], options: _Options) -> None:
        self._name = name
        self._out = out
        self._options = options

    def run(self, nodes: Sequence[Any], dot: Any, scope: dict[str, Any]) -> None:
        for node in nodes:
            if isinstance(node, _Text):
                self._out.append(node.text)
            elif isinstance(node, _Output):
                self._out.append(_text_of(self.pipe(node.pipe, dot, scope)))
            elif isinstance(node, _If):
                self._conditional(node, dot, scope)
            else:
                self._range(node, dot, scope)

    def _conditional(self, node: _If, dot: Any, scope: dict[str, Any]) -> None:
        for condition, body in node.branches:
            if not condition:
                self.run(body, dot, scope)
                return
            value = self.pipe(condition, dot, scope)
            if _truth(value):
                self.run(body, value if node.kind == "with" else dot, dict(scope))
                return

    def _range(self, node: _Range, dot: Any, scope: dict[str, Any]) -> None:
        value = self.pipe(node.pipe, dot, scope)
        if isinstance(value, Mapping):
            items: list[tuple[Any, Any]] = sorted(value.items())
        elif isinstance(value, list | tuple):
            items = list(enumerate(value))
        elif value is NO_VALUE or value is None:
            items = []
        else:
            raise TemplateError(f"template {self._name}: range can't iterate over {value!r}")
        if not items:
            self.run(node.else_body, dot, scope)
        for key, item in items:
            inner = dict(scope)
            if node.key_var:
                inner[node.key_var] = key
            if node.value_var:
                inner[node.value_var] = item
            self.run(node.body, item, inner)

    def pipe(self, text: str, dot: Any, scope: dict[str, Any]) -> Any:
        found = _TOKEN.finditer(text)
        tokens = [m.group(m.lastgroup or "word") for m in found if m.group(0).strip()]
        try:
            value, rest = _Evaluator(self._name, dot, scope, self._options).pipeline(tokens)
        except TemplateError as err:
            raise TemplateError(f"{err} in {{{{{text}}}}}") from None
        if rest:
            raise TemplateError(f"template {self._name}: unexpected {rest[0]!r} in {{{{{text}}}}}")
        return value


class _Evaluator:
    def __init__(self, name: str, dot: Any, scope: dict[str, Any], options: _Options) -> None:
        self._name = name
        self._dot = dot
        self._scope = scope
        self._options = options

    def fail(self, message: str) -> TemplateError:
        return TemplateError(f"template {self._name}: {message}")

    def pipeline(self, tokens: list[str]) -> tuple[Any, list[str]]:
        value, tokens = self.command(tokens, None)
        while tokens and tokens[0] == "|":
            value, tokens = self.command(tokens[1:], (value,))
        return value, tokens

    def command(self, tokens: list[str], piped: tuple[Any] | None) -> tuple[Any, list[str]]:
        if not tokens:
            raise self.fail("empty command")
        head = tokens[0]
        functions = self._options.functions
        if head in functions or head == "call":
            args: list[Any] = []
            tokens = tokens[1:]
            while tokens and tokens[0] not in ("|", ")"):
                arg, tokens = self.operand(tokens)
                args.append(arg)
            if piped is not None:
                args.append(piped[0])
            if head == "call":
                return _call(self, args), tokens
            return functions[head](self, args), tokens
        if piped is not None:
            raise self.fail(f"{head} is not a function")
        return self.operand(tokens)

    def operand(self, tokens: list[str]) -> tuple[Any, list[str]]:
        head, rest = tokens[0], tokens[1:]
        if head == "(":
            value, rest = self.pipeline(rest)
            if not rest or rest[0] != ")":
                raise self.fail("unclosed (")
            return value, rest[1:]
        if head[0] in "\"`":
            return (json.loads(head) if head[0] == '"' else head[1:-1]), rest
        return self.word(head), rest

    def word(self, word: str) -> Any:
        literals = {"true": True, "false": False, "nil": None}
        if word in literals:
            return literals[word]
        if re.fullmatch(r"-?\d+(\.\d+)?", word):
            return float(word) if "." in word else int(word)
        if word.startswith("."):
            return self._walk(self._dot, word[1:])
        if word.startswith("$"):
            name, _, path = word.partition(".")
            if name not in self._scope:
                raise self.fail(f"undefined variable {name}")
            return self._walk(self._scope[name], path)
        raise self.fail(f"function {word!r} not defined")


    def _walk(self, value: Any, path: str) -> Any:
        if not self._options.missing_key_error:
            return _path(value, path)
        for key in filter(None, path.split(".")):
            if not isinstance(value, Mapping):
                raise self.fail(f"can't evaluate field {key} in {_text_of(value)!r}")
            if key not in value:
                raise self.fail(f'map has no entry for key "{key}"')
            value = value[key]
        return value


def _path(value: Any, path: str) -> Any:
    for key in filter(None, path.split(".")):
        if isinstance(value, Mapping):
            value = value.get(key, NO_VALUE)
        else:
            return NO_VALUE
    return value


def _repo_url_to_https(url: Any) -> str:
    text = str(url)
    ssh = re.fullmatch(r"(?:ssh://)?[\w.-]+@([\w.-]+)[:/](.+?)(?:\.git)?", text)
    if ssh:
        return f"https://{ssh.group(1)}/{ssh.group(2)}"
    return re.sub(r"\.git$", "", text)


def _call(ev: _Evaluator, args: list[Any]) -> Any:
    if not args or not callable(args[0]):
        raise ev.fail("call needs a function such as .repo.RepoURLToHTTPS")
    return args[0](*args[1:])


def _printf_verb(match: re.Match[str]) -> str:
    return "%" if match.group(0) == "%%" else "{}"


def _printf(ev: _Evaluator, args: list[Any]) -> str:
    if not args:
        raise ev.fail("printf needs a format")
    # Braces are text in Go's format: escaped before the verbs become Python's `{}`.
    escaped = str(args[0]).replace("{", "{{").replace("}", "}}")
    fmt = re.sub(r"%%|%[-+ #0]*\d*(?:\.\d+)?[vsdqtfg]", _printf_verb, escaped)
    try:
        return fmt.format(*(_text_of(a) for a in args[1:]))
    except IndexError:
        raise ev.fail(f"printf {args[0]!r}: not enough arguments") from None


def _arity(n: int, fn: Callable[..., Any]) -> Callable[[_Evaluator, list[Any]], Any]:
    def checked(ev: _Evaluator, args: list[Any]) -> Any:
        if len(args) != n:
            raise ev.fail(f"wrong number of arguments: want {n}, got {len(args)}")
        return fn(*args)

    return checked


def _index(ev: _Evaluator, args: list[Any]) -> Any:
    value = args[0] if args else NO_VALUE
    for key in args[1:]:
        if isinstance(value, Mapping):
            value = value.get(key, NO_VALUE)
        elif isinstance(value, list | tuple) and isinstance(key, int) and 0 <= key < len(value):
            value = value[key]
        else:
            raise ev.fail(f"index of {key!r} out of range")
    return value


def _and(ev: _Evaluator, args: list[Any]) -> Any:
    for arg in args:
        if not _truth(arg):
            return arg
    return args[-1] if args else NO_VALUE


def _or(ev: _Evaluator, args: list[Any]) -> Any:
    for arg in args:
        if _truth(arg):
            return arg
    return args[-1] if args else NO_VALUE


_FUNCTIONS: dict[str, TemplateFunction] = {
    "not": _arity(1, lambda a: not _truth(a)),
    "and": _and,
    "or": _or,
    "eq": lambda ev, a: any(a[0] == b for b in a[1:]),
    "ne": _arity(2, lambda a, b: a != b),
    "lt": _arity(2, lambda a, b: a < b),
    "le": _arity(2, lambda a, b: a <= b),
    "gt": _arity(2, lambda a, b: a > b),
    "ge": _arity(2, lambda a, b: a >= b),
    "len": _arity(1, lambda a: 0 if a is NO_VALUE or a is None else len(a)),
    "index": _index,
    "print": lambda ev, a: "".join(_text_of(x) for x in a),
    "printf": _printf,
    "upper": _arity(1, lambda a: _text_of(a).upper()),
    "lower": _arity(1, lambda a: _text_of(a).lower()),
    "trim": _arity(1, lambda a: _text_of(a).strip()),
    "quote": _arity(1, lambda a: json.dumps(_text_of(a))),
    "toJson": _arity(1, lambda a: json.dumps(None if a is NO_VALUE else a, default=str)),
    "default": _arity(2, lambda d, a: a if _truth(a) else d),
    "contains": _arity(2, lambda sub, s: _text_of(sub) in _text_of(s)),
    "hasPrefix": _arity(2, lambda p, s: _text_of(s).startswith(_text_of(p))),
    "hasSuffix": _arity(2, lambda p, s: _text_of(s).endswith(_text_of(p))),
}

#: What `.repo` offers templates, as Argo CD's notifications do.
REPO_FUNCTIONS: Mapping[str, Any] = {"RepoURLToHTTPS": _repo_url_to_https}

#: Go's truth and text of a value, for function tables written outside this module.
truth = _truth
text_of = _text_of
