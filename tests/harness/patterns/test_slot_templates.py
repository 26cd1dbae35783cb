"""A prompt slot only fills in its variables: every other construct (an attribute, an item,
a call, a loop, an include, a macro, a set, a filter not on the list...) is refused when
the prompt file loads, in one line naming the file, the slot and the construct, before
any request, through an arm, a pipeline's stage and an experiment file; what is allowed
renders as Jinja2 renders it; a rendered slot is bounded, and a run whose slot would pass
the bound is recorded as refused with nothing sent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import loopbench
from loopbench.harness.arms import MAX_PROMPT_FILE_BYTES
from loopbench.harness.cli.main import main
from loopbench.harness.errors import BadInput
from loopbench.harness.patterns.catalog import registered
from loopbench.harness.slot_templates import (
    _ENV,
    FILTERS,
    MAX_SLOT_TEXT,
    MAX_TAG_TOKENS,
    SlotTooLarge,
    render,
    template_problem,
)

#: tot's ``state`` slot receives these, so attribute access on a declared variable is tried.
STATE = ("question", "steps")

#: Each hostile text, and a word the refusal says of it.
ESCAPES = {
    "cycler globals": (
        "{{ self._TemplateReference__context.cycler.__init__.__globals__.os.system"
        "('touch pwned') }}",
        "calls a function",
    ),
    "lipsum globals": ("{{ lipsum.__globals__ }}", "reads an attribute"),
    "mro of a variable": ("{{ question.__class__.__mro__ }}", "reads an attribute"),
    "a loop of range": ("{% for i in range(300000000) %}x{% endfor %}", "loops"),
    "include": ("{% include 'x' %}", "includes a template"),
    "extends": ("{% extends 'x' %}", "extends a template"),
    "recursive macro": ("{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}", "defines a macro"),
    "cycler": ("{{ cycler }}", "uses cycler"),
    "a literal's class": ("{{ ''.__class__ }}", "reads an attribute"),
    "attr filter": ("{{ question|attr('__class__') }}", "the filter 'attr'"),
    "item access": ("{{ question['__class__'] }}", "reads an item"),
    "index": ("{{ question[0] }}", "reads an item"),
    "set": ("{% set x = question %}{{ x }}", "sets a variable"),
    "import": ("{% import 'x' as y %}", "imports a template"),
    "from import": ("{% from 'x' import y %}", "imports from a template"),
    "format filter": ("{{ '%s'|format(question) }}", "the filter 'format'"),
    "map filter": ("{{ steps|map('upper') }}", "the filter 'map'"),
    "selectattr filter": ("{{ steps|selectattr('x') }}", "the filter 'selectattr'"),
    "a test": ("{{ question is defined }}", "tests a value"),
    "string repeat": ("{{ 'x' * 1000000000 }}", "computes with an operator"),
    "joining": ("{{ question ~ question }}", "joins values"),
    "a list": ("{{ [question, steps] }}", "builds a list"),
    "call block": ("{% call m() %}x{% endcall %}", "calls a macro"),
    "filter block": ("{% filter upper %}x{% endfilter %}", "filters a block"),
    "with": ("{% with a = question %}{{ a }}{% endwith %}", "scopes variables"),
    "block": ("{% block b %}x{% endblock %}", "defines a block"),
    "autoescape": ("{% autoescape false %}x{% endautoescape %}", "autoescape"),
    "self": ("{{ self }}", "uses self"),
    "namespace": ("{{ namespace }}", "uses namespace"),
    "a filter's argument a variable": ("{{ steps|replace('', question) }}", "an argument"),
    "indent of a billion": ("{{ question|indent(1000000000) }}", "cannot take"),
    "an inline if without else": ("{{ question if steps }}", "without an else"),
    "ordering": ("{{ question < 3 }}", "== or !="),
    "deep nesting": ("{{ " + "not " * 100 + "question }}", "nests deeper"),
    "a 5,000-digit number": ("{{ " + "9" * 5000 + " }}", "number too long"),
    "a count computed": ("{{ question|replace('a', 'b', 10**30) }}", "an argument"),
    "a count too large written out": (
        "{{ question|replace('a', 'b', 1" + "0" * 30 + ") }}",
        "cannot take",
    ),
    "a name of 512 KiB": ("{{ " + "a" * 2**19 + " }}", "aaa..."),
    "a tag of 512 KiB": ("{% " + "a" * 2**19 + " %}", "aaa..."),
    "many filters": ("{{ question|upper }}" * 65, "more than 64 filters"),
    "many tags": ("{{ question }}" * (MAX_TAG_TOKENS // 3 + 1), "tokens"),
}


@pytest.fixture
def nowhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A run's arguments against an endpoint that must never be reached, run in tmp_path."""
    monkeypatch.chdir(tmp_path)
    return ["run", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--max-retries", "0",
            "--tasks", "depot", "--out", str(tmp_path / "out")]  # fmt: skip


def refused_line(args: list[str], tmp_path: Path) -> str:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    [line] = result.output.strip().splitlines()
    assert line.startswith("Error: "), line
    assert not (tmp_path / "out").exists() and not (tmp_path / "pwned").exists()
    return line


@pytest.mark.parametrize("case", ESCAPES)
def test_every_construct_beyond_filling_in_is_refused_when_the_file_loads(
    case: str, tmp_path: Path, nowhere: list[str]
) -> None:
    text, said = ESCAPES[case]
    (tmp_path / "p.toml").write_text(f"state = {json.dumps(text)}\n", encoding="utf-8")
    line = refused_line([*nowhere, "--arm", "tot:prompts=p.toml"], tmp_path)
    assert "prompts=p.toml" in line and "slot 'state'" in line and said in line, line
    assert len(line) < 500, line  # what it quotes of the slot is cut


@pytest.mark.parametrize("case", ["cycler globals", "mro of a variable", "a loop of range"])
def test_a_pipeline_stage_and_an_experiment_file_refuse_them_alike(
    case: str, tmp_path: Path, nowhere: list[str]
) -> None:
    text, said = ESCAPES[case]
    (tmp_path / "p.toml").write_text(f"state = {json.dumps(text)}\n", encoding="utf-8")
    stage = "pipeline:stages=tot;prompts=p.toml>direct"
    line = refused_line([*nowhere, "--arm", stage], tmp_path)
    assert "stage 1" in line and "slot 'state'" in line and said in line, line
    (tmp_path / "exp.toml").write_text(f'arms = ["tot:prompts=p.toml", {json.dumps(stage)}]\n')
    line = refused_line([*nowhere, "--experiment", "exp.toml"], tmp_path)
    assert "exp.toml" in line and "slot 'state'" in line and said in line, line


def test_the_api_refuses_them_too() -> None:
    with pytest.raises(BadInput, match="slot 'state': reads an attribute"):
        loopbench.arm("tot", prompts={"state": "{{ question.__class__ }}"})


def test_every_built_in_text_is_within_what_a_slot_may_hold() -> None:
    found = {
        f"{pattern}.{slot.name}": problem
        for pattern, info in registered().items()
        for slot in info.prompts.slots.values()
        if (problem := template_problem(slot.default, slot.variables))
    }
    assert found == {}


ALLOWED = {
    "{{ question }} / {{ steps }}": "Q / S",
    "{% if steps %}has {{ steps }}{% elif question %}q{% else %}none{% endif %}": "has S",
    "{% if steps == 'S' and not question != 'Q' %}same{% endif %}": "same",
    "{{ steps or 'nothing yet' }}|{{ '' or steps }}": "S|S",
    "{{ 'yes' if steps else 'no' }}": "yes",
    "{{ question|lower }}{{ steps|default('x', true) }}{{ ''|d('empty', true) }}": "qSempty",
    "{{ question|replace('Q', 'Qu') }} {{ 'a b'|title }} {{ ' t '|trim }}|{{ 'abc'|length }}": (
        "Qu A B t|3"
    ),
    "{{ 'one\ntwo'|indent(2) }}|{{ 'abcdefghij'|truncate(6, true, '...', 0) }}": (
        "one\n  two|abc..."
    ),
    "{% raw %}{{ kept }}{% endraw %}{# a comment #}\n": "{{ kept }}\n",
}


@pytest.mark.parametrize("text", ALLOWED)
def test_what_a_slot_may_hold_renders_as_jinja_renders_it(text: str) -> None:
    assert template_problem(text, STATE) is None
    assert render(text, {"question": "Q", "steps": "S"}) == ALLOWED[text]


def test_the_sandbox_has_no_globals_tests_or_other_filters_even_past_the_check() -> None:
    assert _ENV.globals == {} and _ENV.tests == {} and set(_ENV.filters) == set(FILTERS)
    for text in ("{{ ''.__class__.__mro__ }}", "{{ cycler }}", "{{ range(3) }}"):
        with pytest.raises(Exception, match=r"undefined|unsafe|not safely"):
            _ENV.from_string(text).render()


def test_a_rendered_slot_past_its_bound_is_refused_before_it_is_made() -> None:
    question = "q" * 1000
    text = "{{ question }}" * 1200  # 1.2 MB from a 1,000-character question
    assert template_problem(text, STATE) is None
    with pytest.raises(SlotTooLarge, match="more than"):
        render(text, {"question": question, "steps": ""})
    with pytest.raises(SlotTooLarge, match="with the filter replace"):
        render("{{ question|replace('', '" + "y" * 2000 + "') }}", {"question": question})
    with pytest.raises(SlotTooLarge, match="with the filter indent"):
        render("{{ question|indent(2000) }}", {"question": "\n" * 1000})
    # a variable sent whole, however long, is within its bound
    assert len(render("{{ question }}", {"question": "q" * (3 * MAX_SLOT_TEXT)})) > MAX_SLOT_TEXT


def test_a_run_whose_slot_passes_the_bound_is_refused_and_sends_nothing(tmp_path: Path) -> None:
    calls = []

    def model(request: loopbench.ModelRequest) -> str:
        calls.append(request)
        return "Answer: 84"

    (tmp_path / "long.toml").write_text('state = "' + "{{ question }}" * 1300 + '{{ steps }}"\n')
    tasks = tmp_path / "t.jsonl"
    tasks.write_text(json.dumps({"id": "a", "question": "x" * 1000, "answer": "1"}) + "\n")
    out = tmp_path / "r"
    arm = f"tot:prompts={tmp_path / 'long.toml'}"
    loopbench.Experiment(str(tasks), [arm], model=model, out=out, grader=lambda t, a: True).run()
    [record] = loopbench.load(out).records()
    assert record.status == "refused" and "prompt slot 'state'" in (record.error or "")
    assert calls == []


def test_a_prompt_file_over_1_mib_is_refused_unread(tmp_path: Path, nowhere: list[str]) -> None:
    text = "Think. " * (MAX_PROMPT_FILE_BYTES // 7)
    (tmp_path / "big.toml").write_text(f'step = "{text}"\n', encoding="utf-8")
    line = refused_line([*nowhere, "--arm", "cot:prompts=big.toml"], tmp_path)
    assert "big.toml" in line and "larger than 1 MiB" in line, line


def test_a_slot_text_over_its_bound_is_refused_from_the_api_too() -> None:
    with pytest.raises(BadInput, match=r"slot 'step': is \d+ characters long"):
        loopbench.arm("cot", prompts={"step": "x" * (MAX_SLOT_TEXT + 1)})


def test_a_construct_without_a_line_is_refused_saying_where_it_stands():
    found = template_problem(
        "{% autoescape true %}{{ question }}{% endautoescape %}", ("question",)
    )
    assert found is not None and "scope" in found and "in its text" in found
    assert "None" not in found
