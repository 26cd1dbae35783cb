"""A run is planned once: each arm parsed once and its pattern built once, whatever the
number of runs, and every run of the arm runs that one pattern."""

from collections import Counter

import pytest

import loopbench.harness.arms
from loopbench.harness.api import Experiment
from loopbench.harness.config import ModelEntry, RunConfig
from loopbench.harness.fakes.fake_server import FakeServer
from loopbench.harness.patterns.registry import PATTERNS, PatternInfo


@pytest.fixture
def counted(monkeypatch):
    """Calls of ``parse_arm``, patterns built by name, and the pattern objects each run ran."""
    seen: Counter[str] = Counter()
    parse = loopbench.harness.arms.parse_arm

    def parse_arm(text: str):  # type: ignore[no-untyped-def]
        seen[f"parse {text}"] += 1
        return parse(text)

    monkeypatch.setattr(loopbench.harness.arms, "parse_arm", parse_arm)
    for name, info in PATTERNS.registered().items():

        def factory(options, made=info.factory, name=name):  # type: ignore[no-untyped-def]
            seen[f"built {name}"] += 1
            return made(options)

        counting = PatternInfo(name, info.options_model, factory, info.summary, info.prompts)
        monkeypatch.setitem(PATTERNS._entries, name, counting)
    return seen


def test_each_arm_is_parsed_once_and_its_pattern_built_once(counted, tmp_path):
    with FakeServer() as server:
        config = RunConfig(
            arms=["react_text", "cot|direct"],
            repeats=2,
            limit=3,
            out=str(tmp_path / "out"),
            models=[ModelEntry(name="fake", base_url=server.base_url)],
        )
        results = Experiment.from_config(config, say=lambda line: None).run()
    assert results.ran == 3 * 3 * 2
    assert counted == Counter(
        {
            "parse react_text": 1,
            "parse cot": 1,
            "parse direct": 1,
            "built react_text": 1,
            "built cot": 1,
            "built direct": 1,
        }
    )
