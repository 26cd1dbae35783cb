"""The stopping rule of ``run --until-separated``, simulated: how often identical arms are
declared different (must stay at or below alpha), and how early a real gap stops the run.

Each simulated run has two arms over T tasks of unequal difficulty (each task's chance
drawn from Beta(2, 2) for the better arm; the other arm's chance is that minus the gap),
one repeat per round, at most 10 rounds; the decisions are the ones `run` replays.
"Peeking" checks the same test at full alpha after every round, for contrast.

    .venv/bin/python bench/separation.py [--runs 2000]
"""

from __future__ import annotations

import argparse

import numpy as np

from loopbench.harness.stats.separation import SeparationRule, replay


class Peeking(SeparationRule):
    """The same test at full alpha after every round, nothing spent, no futility."""

    def look_alpha(self, arms: int, round_: int | None = None) -> float:
        return self.alpha


def simulate(
    rule: SeparationRule, tasks: int, gap: float, runs: int, seed: int
) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    declared, rounds = 0, []
    for _ in range(runs):
        good = rng.beta(2, 2, tasks)
        poor = np.clip(good - gap, 0, 1)
        draws = {
            arm: (rng.random((tasks, rule.max_repeats)) < p[:, None]).astype(float)
            for arm, p in (("good", good), ("poor", poor))
        }
        state = replay(draws, rule, rule.max_repeats)
        declared += any(d.look.verdict in ("better", "worse") for d in state.decisions.values())
        rounds.append(state.rounds)
    made = np.array(rounds)
    return {
        "declared": declared / runs,
        "rounds": float(made.mean()),
        "early": float((made < rule.max_repeats).mean()),
        "saved": float(1 - made.mean() / rule.max_repeats),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000, help="simulated runs per setting")
    runs = parser.parse_args().runs
    rule = SeparationRule(alpha=0.05, margin=0.05, max_repeats=10)
    print(f"alpha {rule.alpha}, margin {rule.margin}, at most {rule.max_repeats} rounds, ", end="")
    print(f"{runs} runs each\n")
    print("| tasks | gap | declared different | peeking would declare | mean rounds ", end="")
    print("| stopped early | runs not spent |")
    print("|---|---|---|---|---|---|---|")
    for tasks in (12, 50, 200):
        for gap in (0.0, 0.1, 0.2, 0.3):
            seed = 1000 * tasks + int(100 * gap)
            got = simulate(rule, tasks, gap, runs, seed)
            peeking = Peeking(rule.alpha, rule.margin, rule.max_repeats, "bonferroni", 0.0)
            peek = simulate(peeking, tasks, gap, runs, seed)["declared"]
            print(
                f"| {tasks} | {gap:.1f} | {got['declared']:.3f} | {peek:.3f} | {got['rounds']:.1f} "
                f"| {got['early']:.0%} | {got['saved']:.0%} |"
            )


if __name__ == "__main__":
    main()
