"""Generated depot-style sets: every question answered by the reference solver from the text
alone, with the hop count it states; the knobs show in what is made; the same seed makes the
same bytes; the shipped sets are what their recorded command makes."""

import contextlib
import json
import os
import re
import subprocess
import sys

import pytest

from loopbench.graders.answer_keys import OPERATIONS
from loopbench.graders.exact import grade, numbers_in
from loopbench.harness.tools import ToolFailure
from loopbench.tasks.generate.build import Options, generate
from loopbench.tasks.generate.check import disagreements
from loopbench.tasks.generate.names import NameMaker, is_clean
from loopbench.tasks.generate.solver import SolverError, Walk, solve
from loopbench.tasks.generate.writer import write_set
from loopbench.tasks.loading import load_taskset
from loopbench.tasks.taskset import BUILTIN_DIR, Task, TaskSet, TaskSetError
from loopbench.tasks.tools import Encyclopedia, improved_lookup, plain_lookup

SHIPPED = ("depot-500", "depot-easy")
SMALL = Options(n=80, hops=(1, 4), seed=3, ambiguity=0.4, distractors=0.5, public=6, name="s")


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> TaskSet:
    folder = tmp_path_factory.mktemp("small")
    write_set(generate(SMALL), folder)
    return load_taskset(folder)


def every_set(small: TaskSet) -> list[TaskSet]:
    return [small, *(load_taskset(name) for name in SHIPPED)]


def exact_tasks(taskset: TaskSet) -> list[Task]:
    tasks = [t for t in taskset.tasks if isinstance(t, Task)]
    assert len(tasks) == len(taskset.tasks)
    return tasks


def book_of(taskset: TaskSet) -> Encyclopedia:
    assert taskset.encyclopedia is not None
    return taskset.encyclopedia


def test_the_solver_answers_every_question_with_the_hops_it_states(small):
    for taskset in every_set(small):
        book = book_of(taskset)
        for task in exact_tasks(taskset):
            solved = solve(task.question, book)
            assert solved.expected == task.expected, task.id
            assert solved.hops == task.hops == len(task.solution.lookups), task.id
            assert solved.solution == task.solution, task.id
        assert disagreements(taskset) == []


def test_hop_counts_span_the_range_and_name_their_slice(small):
    for taskset, wanted in zip(every_set(small), ({1, 2, 3, 4}, {2, 3, 4}, {1}), strict=True):
        tasks = exact_tasks(taskset)
        generated = [t for t in tasks if t.slice != "public"]
        assert {t.hops for t in generated} == wanted
        assert all(t.slice == f"hops-{t.hops}" for t in generated)
    public = [t for t in exact_tasks(small) if t.slice == "public"]
    assert len(public) == 6 and all(t.hops == 2 for t in public)


def operations(taskset: TaskSet) -> set[str]:
    return {t.solution.operation for t in exact_tasks(taskset) if t.solution}


def test_every_operation_appears_where_its_hops_allow(small):
    assert operations(small) == set(OPERATIONS)
    assert operations(load_taskset("depot-500")) == set(OPERATIONS) - {"lookup"}
    assert operations(load_taskset("depot-easy")) == {"lookup"}


def local_depots(taskset: TaskSet) -> list[tuple[Task, str, str, str]]:
    """(task, company, city, title) for every depot a task reaches through its company."""
    found = []
    for task in exact_tasks(taskset):
        for fact in task.solution.facts:
            city = fact.field.removeprefix("depot in ")
            if city != fact.field:
                found.append((task, fact.title, city, str(fact.value)))
    return found


def test_ambiguity_makes_depots_the_plain_lookup_cannot_find_from_the_question(small):
    for taskset in (small, load_taskset("depot-500")):
        book = book_of(taskset)
        reached = local_depots(taskset)
        assert len({title for *_, title in reached}) >= 5
        for task, company, city, title in reached:
            assert f"{company}'s {city} depot" in task.question
            target = book.entries[title]
            guesses = [f"{company}'s {city} depot", f"{company} {city} depot", f"{city} depot"]
            guesses += [city, f"{company} {city}", f"{company.split()[0]} {city} depot"]
            for guess in guesses:
                with contextlib.suppress(ToolFailure):  # a miss or "several match"
                    assert plain_lookup(book, guess) != target, (task.id, guess)
            # The improved lookup's matches (the city first) or related entries name it...
            assert title in improved_lookup(book, f"{company} {city} depot")
            assert title in improved_lookup(book, company).split("Related entries:")[1]
        # ...and a miss explains that such titles exist and where they are listed.
        with pytest.raises(ToolFailure) as missed:
            improved_lookup(book, "Zzyzx qwrtp")
        assert "local title" in str(missed.value) and "lists the titles" in str(missed.value)


def test_without_ambiguity_every_depot_has_its_conventional_title():
    made = generate(Options(n=30, hops=(1, 4), seed=5, ambiguity=0, distractors=0))
    assert not [t for t in made.tasks if any("depot in" in f.field for f in t.solution.facts)]
    assert "usually" not in made.book["naming"]


def test_distractors_make_look_alikes_and_misleading_entries():
    plain = generate(Options(n=60, hops=(2, 4), seed=4, distractors=0))
    busy = generate(Options(n=60, hops=(2, 4), seed=4, distractors=1))
    entries = busy.book["entries"]
    twins = [c for c in busy.world.companies if c.twin_of]
    assert len(twins) == len([c for c in busy.world.companies if not c.twin_of])
    for twin in twins:
        original = busy.world.company(twin.twin_of)
        a, b = twin.short, original.short
        assert len(a) == len(b) and sum(x != y for x, y in zip(a, b, strict=True)) == 1
        shared = {d.city for d in twin.depots} & {d.city for d in original.depots}
        assert shared  # another company's depot in the same city...
        assert all(len(busy.book["related"][city]) >= 2 for city in shared)  # ...both listed
    retired = [p for p in busy.world.people.values() if p.role == "retired"]
    assert len(retired) == len(twins) and all(p.name in entries for p in retired)
    assert any(t.endswith(" workshop") for t in entries)
    assert any(t.startswith("History of ") for t in entries)
    assert not [c for c in plain.world.companies if c.twin_of]
    assert not any(
        t.endswith(" workshop") or t.startswith("History") for t in plain.book["entries"]
    )
    cities = [d.city for d in plain.world.depots]
    assert len(cities) == len(set(cities))  # without distractors, a city has one depot


def test_operations_and_public_knobs_restrict_and_add(small):
    made = generate(Options(n=12, hops=(2, 3), seed=9, operations=("ratio", "which")))
    assert {t.solution.operation for t in made.tasks} == {"ratio", "which"}
    assert {t.expected.tolerance for t in made.tasks if t.solution.operation == "ratio"} == {0.005}
    ratio = next(t for t in made.tasks if t.solution.operation == "ratio")
    assert "to the nearest hundredth" in ratio.question
    public = [t for t in exact_tasks(small) if t.slice == "public"]
    assert all(t.id.startswith("public-") for t in public)
    assert "Mount Everest" in book_of(small).entries


def test_adding_public_questions_leaves_the_world_and_its_questions_alone():
    without = generate(Options(n=20, hops=(2, 3), seed=8))
    with_public = generate(Options(n=20, hops=(2, 3), seed=8, public=3))
    assert [t.question for t in with_public.tasks[:20]] == [t.question for t in without.tasks]


def test_a_grader_accepts_a_right_phrasing_and_refuses_a_wrong_one(small):
    for taskset in every_set(small):
        for task in exact_tasks(taskset):
            key = task.expected
            shown = [f"{n:,.2f}" if not n.is_integer() else f"{int(n):,}" for n in key.numbers]
            right = f"It is {' and '.join(key.entities) or 'this'}: {', '.join(shown)}."
            assert grade(right, key.numbers, key.entities, key.tolerance).correct, task.id
            off = [n + 1 for n in key.numbers]
            wrong = f"It is {' and '.join(key.entities) or 'this'}: {', '.join(map(str, off))}."
            assert not grade(wrong, key.numbers, key.entities, key.tolerance).correct, task.id
            if key.entities:
                other = f"It is Elsewhere: {', '.join(shown)}."
                assert not grade(other, key.numbers, key.entities, key.tolerance).correct


def test_no_name_holds_a_digit_or_a_number_word(small):
    for taskset in every_set(small):
        for title in book_of(taskset).entries:
            assert not re.search(r"\d", title) and numbers_in(title) == [], title
        for task in exact_tasks(taskset):
            assert all(numbers_in(entity) == [] for entity in task.expected.entities)
    assert not is_clean("Ten Haulage") and not is_clean("Nine") and not is_clean("Kal9")
    assert is_clean("Tenby Haulage") and is_clean("Veltrano")


def test_names_come_out_new_and_clean():
    import random

    maker = NameMaker(random.Random(0))
    words = [maker.company_word() for _ in range(300)] + [maker.city() for _ in range(300)]
    assert len({w.casefold() for w in words}) == 600 and all(is_clean(w) for w in words)
    assert maker.near("Veltrano") not in ("Veltrano", *words)


def test_the_same_seed_gives_the_same_bytes_and_another_seed_another_world(tmp_path):
    for folder in ("a", "b"):
        write_set(generate(SMALL), tmp_path / folder)
    for name in ("taskset.toml", "tasks.jsonl", "encyclopedia.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
        assert (tmp_path / "a" / name).read_text().endswith("}\n" if "json" in name else '"\n')
    other = generate(Options(**{**SMALL.__dict__, "seed": 4}))
    mine = json.loads((tmp_path / "a" / "encyclopedia.json").read_text())
    shared = set(mine["entries"]) & set(other.book["entries"])
    assert len(shared) < len(mine["entries"]) // 4  # only the public facts and chance overlap


def test_the_fingerprint_ignores_the_metadata_and_a_wrong_hop_count_is_refused(tmp_path):
    taskset = load_taskset("depot-easy")
    task = exact_tasks(taskset)[0]
    bare = Task(id=task.id, question=task.question, expected=task.expected)
    assert bare.fingerprint == task.fingerprint
    folder = tmp_path / "s"
    folder.mkdir()
    for name in ("taskset.toml", "encyclopedia.json"):
        (folder / name).write_bytes((BUILTIN_DIR / "depot-easy" / name).read_bytes())
    line = json.loads((BUILTIN_DIR / "depot-easy" / "tasks.jsonl").read_text().splitlines()[0])
    (folder / "tasks.jsonl").write_text(json.dumps({**line, "hops": 2}) + "\n")
    with pytest.raises(TaskSetError, match=r"tasks.jsonl:1: .*hops is 2 but the solution lists 1"):
        load_taskset(folder)


def test_the_shipped_sets_are_built_in_and_record_their_command():
    for name in SHIPPED:
        taskset = load_taskset(name)
        assert taskset.name == name and taskset.tools == ("lookup", "calc")
        assert taskset.generated_by.startswith("loopbench tasks generate ")
        assert f"--name {name}" in taskset.generated_by
    assert len(load_taskset("depot-500").tasks) == 500
    assert len(load_taskset("depot-easy").tasks) == 100
    assert len(book_of(load_taskset("depot-500")).entries) < 400


def test_the_solver_looks_up_only_titles_it_was_given(small):
    book = book_of(small)
    task, company, city, title = local_depots(small)[0]
    text = book.entries[company].replace(f" (entry '{title}')", "")  # no longer named
    hidden = Encyclopedia({**book.entries, company: text}, book.related, book.naming)
    with pytest.raises(SolverError, match="lists no depot"):
        solve(task.question, hidden)
    walk = Walk(task.question, book, produced=set())
    with pytest.raises(SolverError, match="named neither by the question nor by an entry"):
        walk.read(title, "depot")  # a title it has not been given, though it exists
    walk.read(company, "company")
    assert walk.read(title, "depot").fields["city"] == city and walk.lookups == [company, title]
    with pytest.raises(SolverError, match="0 readings"):
        solve("How tall is the depot?", book)


def test_without_the_convention_in_the_naming_note_depots_cost_a_look_up_more(small):
    book = book_of(small)
    task = next(t for t in exact_tasks(small) if t.question.startswith("How many trucks does"))
    quiet = Encyclopedia(book.entries, book.related, "Entries are titled by name.")
    assert solve(task.question, quiet).hops == task.hops + 1


def test_the_bytes_do_not_depend_on_string_hashing():
    # Set and dict order of strings changes with PYTHONHASHSEED; nothing made may follow it.
    script = (
        "import hashlib\n"
        "from loopbench.tasks.generate.build import Options, generate\n"
        "from loopbench.tasks.generate.writer import render\n"
        "files = render(generate(Options(n=40, hops=(1, 4), seed=11, public=3, distractors=0.6)))\n"
        "print(hashlib.sha256(''.join(files.values()).encode()).hexdigest())\n"
    )
    digests = {
        subprocess.run(
            [sys.executable, "-c", script],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2")
    }
    assert len(digests) == 1


HAND_MADE = Encyclopedia(
    {
        "Porvik": "Porvik is a market town in the Namark region. Population: 48,200.",
        "Veltrano Haulage": "Veltrano Haulage is a road-haulage company headquartered in Porvik. "
        "It was founded in 1931 by Orla Dunmere, and its chief executive is Ilsa Varrow. It runs "
        "two depots: in Porvik (entry 'Porvik yard (Veltrano)') and in Dressen (entry "
        "'Veltrano Haulage Dressen depot').",
        "Porvik yard (Veltrano)": "The Porvik depot of Veltrano Haulage opened in 1950. It runs "
        "40 trucks and 5 vans and is managed by Tomas Kell.",
        "Veltrano Haulage Dressen depot": "Opened in 1962, Veltrano Haulage's depot at Dressen "
        "keeps 52 trucks and 40 vans. Its manager is Ada Brun.",
        "Ilsa Varrow": "Ilsa Varrow was born in Porvik in 1961. Varrow became chief executive "
        "of Veltrano Haulage in 2011.",
        "Tomas Kell": "Tomas Kell (born 1970 in Porvik) has been manager of Veltrano Haulage's "
        "Porvik depot since 1999.",
    },
    naming="A company's depot is usually titled '<company> <city> depot'.",
)


@pytest.mark.parametrize(
    ("question", "numbers", "entities", "lookups"),
    [
        (
            "How many more trucks does Veltrano Haulage's Dressen depot have than "
            "Veltrano Haulage's Porvik depot?",
            [12],
            [],
            ["Veltrano Haulage Dressen depot", "Veltrano Haulage", "Porvik yard (Veltrano)"],
        ),
        (
            "How many trucks per van does Veltrano Haulage's Porvik depot have, to the "
            "nearest hundredth?",
            [8.0],
            [],
            ["Veltrano Haulage", "Porvik yard (Veltrano)"],
        ),
        (
            "What is the ratio of the vans at Veltrano Haulage's Porvik depot to the vans at "
            "Veltrano Haulage's Dressen depot, to the nearest hundredth?",
            [0.13],  # 5/40 = 0.125, rounded half up as a person would (not to even)
            [],
            ["Veltrano Haulage", "Porvik yard (Veltrano)", "Veltrano Haulage Dressen depot"],
        ),
        (
            "Which of Veltrano Haulage's depots opened first, and in what year?",
            [1950],
            ["Porvik"],
            ["Veltrano Haulage", "Porvik yard (Veltrano)", "Veltrano Haulage Dressen depot"],
        ),
        (
            "How old was the manager of Veltrano Haulage's Porvik depot in the year they took "
            "up their post?",
            [29],
            [],
            ["Veltrano Haulage", "Porvik yard (Veltrano)", "Tomas Kell"],
        ),
        (
            "Who is older, the chief executive of Veltrano Haulage or the manager of Veltrano "
            "Haulage's Porvik depot, and by how many years? Give their name.",
            [9],
            ["Ilsa Varrow"],
            ["Veltrano Haulage", "Ilsa Varrow", "Porvik yard (Veltrano)", "Tomas Kell"],
        ),
    ],
)
def test_the_solver_on_a_hand_made_encyclopedia(question, numbers, entities, lookups):
    # Worked out by hand, so the solver is checked against more than the generator.
    solved = solve(question, HAND_MADE)
    assert solved.expected.numbers == numbers and solved.expected.entities == entities
    assert solved.solution.lookups == lookups and solved.hops == len(lookups)
