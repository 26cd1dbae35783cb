"""A grid leaves Python's garbage collector as it found it: its settled objects frozen and
its young objects collected less often only while the grid runs."""

from __future__ import annotations

import gc

from loopbench.harness.grid import YOUNG_OBJECTS_PER_PASS, settled_objects_frozen


def test_while_a_grid_runs_settled_objects_are_frozen_and_then_handed_back() -> None:
    before = gc.get_threshold()
    assert gc.get_freeze_count() == 0
    with settled_objects_frozen():
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold()[0] == max(before[0], YOUNG_OBJECTS_PER_PASS)
        assert gc.get_threshold()[1:] == before[1:]
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == before


def test_a_grid_inside_another_leaves_the_outer_ones_frozen_objects_alone() -> None:
    with settled_objects_frozen():
        frozen = gc.get_freeze_count()
        with settled_objects_frozen():
            assert gc.get_freeze_count() == frozen
        assert gc.get_freeze_count() == frozen  # the inner one unfroze nothing
    assert gc.get_freeze_count() == 0


def test_a_grid_that_fails_still_hands_the_objects_back() -> None:
    before = gc.get_threshold()
    try:
        with settled_objects_frozen():
            raise RuntimeError("a run stopped the grid")
    except RuntimeError:
        pass
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == before
