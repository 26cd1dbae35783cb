"""Guards named where they stand, and broken by name.

A guarded statement carries a marker on its own line directly above it::

    # guard: call-floor-refusal
    if self.options.max_steps < floor.calls:

(``// guard: NAME`` in JavaScript; in a docs page, ``<!-- guard: NAME -->`` above the fenced
block it names). NAME is a kebab-case slug found once in the product: the top-level packages
(every folder of the project holding an ``__init__.py``, tests aside) and docs/. The marked
statement is the one that begins on the next line that is not blank or a comment; the file
is parsed with ``ast`` and the statement rewritten through its offsets, so everything else
stays byte for byte, and the marker still finds it when lines above it move or its words
are changed. A mutation names what it does, never the text it breaks:

- ``off`` / ``on``: an ``if``, ``elif`` or ``while`` condition becomes False / True;
  ``off`` runs a ``with`` block's body without what it enters.
- ``skip``: the statement becomes ``pass`` (a whole ``if`` block, a call, an assignment).
- ``value=EXPR``: the value of an assignment, ``return``, ``raise`` or expression
  statement, the condition of an ``if``, ``elif``, ``while`` or ``assert``, what a ``for``
  walks, or the exceptions an ``except`` catches, becomes EXPR.
- ``stmt=CODE``: the whole statement becomes CODE (``raise``, ``return x``, a line added
  before it); lines after CODE's first take the statement's indentation.
- ``text=OLD->NEW``: the fallback for a fragment no kind reaches (a string in a decorator,
  an argument deep in a call): OLD, found exactly once inside the marked statement,
  becomes NEW. Outside Python (a script, a docs page) it is the only kind.
"""

import ast
import functools
import io
import re
import tokenize
from collections import defaultdict
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).parents[1]

# A marker line in Python, JavaScript or Markdown; NAME is checked apart, so a marker spelt
# wrong is reported rather than missed.
MARKER_LINE = re.compile(
    r"^[ \t]*(?:#|//|<!--)[ \t]*guard:[ \t]*(?P<name>.*?)[ \t]*(?:-->)?[ \t]*$"
)
SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*\Z")
SUFFIXES = {".py": "#", ".js": "//", ".md": "<!--"}


class GuardError(Exception):
    """Why a mutation does not apply to its marked statement."""


class Marker(NamedTuple):
    path: str  # relative to the project root
    line: int  # the marker's own line, from 1
    name: str


def product_files(root: Path = ROOT) -> list[Path]:
    """The files markers may stand in: each top-level package's Python and JavaScript, and
    the docs pages."""
    packages = sorted(
        p for p in root.iterdir() if (p / "__init__.py").is_file() and p.name != "tests"
    )
    found = [f for p in packages for suffix in ("*.py", "*.js") for f in p.rglob(suffix)]
    found += (root / "docs").rglob("*.md")
    return sorted(f for f in found if "__pycache__" not in f.parts)


def markers_in(path: str, text: str) -> list[Marker]:
    opener = SUFFIXES.get(Path(path).suffix, "#")
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        match = MARKER_LINE.match(line)
        if match and line.lstrip().startswith(opener):
            found.append(Marker(path, number, match["name"]))
    return found


@functools.cache
def all_markers(root: Path = ROOT) -> dict[str, list[Marker]]:
    """Every marker in the product, by name (a name found twice lists both)."""
    found: dict[str, list[Marker]] = defaultdict(list)
    for file in product_files(root):
        path = file.relative_to(root).as_posix()
        for marker in markers_in(path, file.read_text(encoding="utf-8")):
            found[marker.name].append(marker)
    return dict(found)


def bad_names(markers: dict[str, list[Marker]]) -> list[str]:
    """Markers whose name is not a kebab-case slug, or that stand in more than one place."""
    problems = [
        f"{m.path}:{m.line}: marker name {name!r} is not a kebab-case slug"
        for name, found in markers.items()
        if not SLUG.match(name)
        for m in found
    ]
    problems += [
        f"{name}: marked {len(found)} times: " + ", ".join(f"{m.path}:{m.line}" for m in found)
        for name, found in markers.items()
        if len(found) > 1
    ]
    return problems


class Source:
    """A Python file's text with its tree and the offsets of its lines."""

    def __init__(self, text: str, path: str = "<source>") -> None:
        self.text, self.path = text, path
        self.lines = text.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))
        try:
            self.tree = ast.parse(text)
        except SyntaxError as error:
            raise GuardError(f"{path} does not parse: {error}") from error

    def offset_in(self, base: int, position: tuple[int, int]) -> int:
        """The offset of a (row, column) position in the text from base on (a tokenizer's)."""
        row, col = position
        before = self.text[base:].splitlines(keepends=True)[: row - 1]
        return base + sum(len(line) for line in before) + col

    def offset(self, lineno: int, col: int) -> int:
        """The character offset of an ast position (whose column counts UTF-8 bytes)."""
        line = self.lines[lineno - 1]
        return self.starts[lineno - 1] + len(line.encode("utf-8")[:col].decode("utf-8"))

    def span(self, node: ast.stmt | ast.expr | ast.ExceptHandler) -> tuple[int, int]:
        start = node
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            start = node.decorator_list[0] if node.decorator_list else node
        assert node.end_lineno is not None and node.end_col_offset is not None
        return (
            self.offset(start.lineno, start.col_offset),
            self.offset(node.end_lineno, node.end_col_offset),
        )


Marked = ast.stmt | ast.ExceptHandler


def first_line(node: Marked) -> int:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return min([node.lineno] + [d.lineno for d in node.decorator_list])
    return node.lineno


def next_code_line(lines: list[str], marker_line: int) -> int:
    """The first line after the marker that is not blank nor a comment (from 1)."""
    for number in range(marker_line + 1, len(lines) + 1):
        stripped = lines[number - 1].strip()
        if stripped and not stripped.startswith(("#", "//", "<!--")):
            return number
    raise GuardError(f"nothing follows the marker at line {marker_line}")


def marked_statement(source: Source, marker_line: int) -> Marked:
    """The outermost statement (or except clause) that begins on the first code line after
    the marker."""
    line = next_code_line(source.lines, marker_line)
    found = [
        node
        for node in ast.walk(source.tree)
        if isinstance(node, ast.stmt | ast.ExceptHandler) and first_line(node) == line
    ]
    if not found:
        raise GuardError(f"{source.path}:{line} begins no statement")
    return min(found, key=lambda n: n.col_offset)


def is_elif(source: Source, node: Marked) -> bool:
    start, _ = source.span(node)
    return isinstance(node, ast.If) and source.text.startswith("elif", start)


def with_header(source: Source, node: ast.With | ast.AsyncWith) -> tuple[int, int]:
    """The span of ``with A, B as c`` up to its colon (parentheses and comments included)."""
    start, _ = source.span(node)
    last = node.items[-1]
    _, end = source.span(last.optional_vars or last.context_expr)
    tokens = tokenize.generate_tokens(io.StringIO(source.text[end:]).readline)
    for token in tokens:
        if token.type == tokenize.OP and token.string == ":":
            return start, source.offset_in(end, token.start)
    raise GuardError("a with statement without its colon")


def target_of(kind: str, node: Marked) -> ast.expr:
    """The expression a kind replaces in a statement."""
    if kind in ("off", "on"):
        if isinstance(node, ast.If | ast.While):
            return node.test
        raise GuardError(f"{kind} takes an if, elif or while, not {type(node).__name__}")
    value: ast.expr | None = None
    if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign | ast.Return | ast.Expr):
        value = node.value
    elif isinstance(node, ast.If | ast.While | ast.Assert):
        value = node.test
    elif isinstance(node, ast.ExceptHandler):
        value = node.type
    elif isinstance(node, ast.For | ast.AsyncFor):
        value = node.iter
    elif isinstance(node, ast.Raise):
        value = node.exc
    if value is None:
        raise GuardError(f"value= takes a statement with a value, not {ast.unparse(node)[:40]!r}")
    return value


def mutate(text: str, marker_line: int, kind: str, path: str = "<source>") -> str:
    """The file's text with the statement marked at marker_line broken by kind."""
    if Path(path).suffix in (".js", ".md"):
        return mutate_text_file(text, marker_line, kind, path)
    source = Source(text, path)
    node = marked_statement(source, marker_line)
    if kind == "skip":
        if is_elif(source, node) or isinstance(node, ast.ExceptHandler):
            raise GuardError("skip takes no elif nor except: use off or value=")
        start, end = source.span(node)
        new = "pass"
    elif kind == "off" and isinstance(node, ast.With | ast.AsyncWith):
        start, end = with_header(source, node)
        new = "if True"
    elif kind.startswith("stmt="):
        if is_elif(source, node) or isinstance(node, ast.ExceptHandler):
            raise GuardError("stmt= takes no elif nor except: use off or value=")
        start, end = source.span(node)
        line = text[text.rfind("\n", 0, start) + 1 :]
        indent = line[: len(line) - len(line.lstrip(" \t"))]
        new = kind.removeprefix("stmt=").replace("\n", "\n" + indent)
    elif kind.startswith("text="):
        start, end = source.span(node)
        return check(replace_once(text, start, end, kind), path)
    elif kind in ("off", "on") or kind.startswith("value="):
        start, end = source.span(target_of(kind, node))
        new = {"off": "False", "on": "True"}.get(kind, kind.removeprefix("value="))
    else:
        raise GuardError(f"no mutation kind {kind!r}")
    return check(text[:start] + new + text[end:], path)


def replace_once(text: str, start: int, end: int, kind: str) -> str:
    old, arrow, new = kind.removeprefix("text=").partition("->")
    if not arrow or not old:
        raise GuardError(f"text= is written text=OLD->NEW, not {kind!r}")
    count = text.count(old, start, end)
    if count != 1:
        raise GuardError(f"{old!r} is found {count} times in the marked statement, not once")
    at = text.index(old, start, end)
    return text[:at] + new + text[at + len(old) :]


def mutate_text_file(text: str, marker_line: int, kind: str, path: str) -> str:
    """A script's marked line, or a docs page's marked fenced block, by text= alone."""
    if not kind.startswith("text="):
        raise GuardError(f"{path} takes text=OLD->NEW alone, not {kind!r}")
    lines = text.splitlines(keepends=True)
    first = next_code_line(lines, marker_line)
    last = first
    if path.endswith(".md") and lines[first - 1].lstrip().startswith("```"):
        while last < len(lines) and not lines[last].lstrip().startswith("```"):
            last += 1
        last += 1
    start = sum(len(line) for line in lines[: first - 1])
    end = start + sum(len(line) for line in lines[first - 1 : last])
    return replace_once(text, start, end, kind)


def check(text: str, path: str) -> str:
    try:
        ast.parse(text)
    except SyntaxError as error:
        raise GuardError(f"the broken {path} does not parse: {error}") from error
    return text


def break_guard(name: str, kind: str, root: Path = ROOT) -> tuple[Path, str, str]:
    """The file marked NAME, its text, and its text with the guard broken by kind."""
    found = all_markers(root).get(name, [])
    if len(found) != 1:
        where = ", ".join(f"{m.path}:{m.line}" for m in found)
        raise GuardError(f"no marker '# guard: {name}'" if not found else f"marked twice: {where}")
    marker = found[0]
    file = root / marker.path
    text = file.read_text(encoding="utf-8")
    return file, text, mutate(text, marker.line, kind, marker.path)
