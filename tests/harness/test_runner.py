from harness.experiment import parse_arms
from harness.runner import expand
from tasks import load_taskset


def test_expand_covers_every_run_once_in_a_repeatable_shuffled_order():
    arms = parse_arms(["direct", "cot", "react_text"])
    depot = load_taskset("depot")
    jobs = list(expand(arms, depot, 2))
    keys = [(j.arm.spec, j.task.id, j.repeat) for j in jobs]
    assert len(keys) == len(set(keys)) == 3 * 12 * 2
    assert [j.repeat for j in jobs] == sorted(j.repeat for j in jobs)  # repeats stay outermost
    assert keys == [(j.arm.spec, j.task.id, j.repeat) for j in expand(arms, depot, 2)]
    round_robin = [a.spec for a in arms] * 12
    assert [k[0] for k in keys[:36]] != round_robin  # no arm always runs right after another
