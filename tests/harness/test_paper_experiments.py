"""The shipped experiment files that set a paper's figures beside the runs: each figure
names one of the file's arms, with the paper's model and source. (Loading a file does not
load its task set; running game24-tot.toml needs the game24 set.)"""

from pathlib import Path

from harness.config import checked_experiment

EXPERIMENTS = Path(__file__).parents[2] / "experiments"


def figures(name: str) -> dict[str, tuple[float, str, str]]:
    written = checked_experiment(EXPERIMENTS / name)
    return {arm: (p.accuracy, p.model, p.source) for arm, p in written.published.items()}


def test_tree_of_thoughts_on_game_of_24_against_the_papers_gpt_4_figures():
    written = checked_experiment(EXPERIMENTS / "game24-tot.toml")
    assert written.tasks == "game24"
    yao = ("GPT-4", "Yao et al. 2023")
    assert figures("game24-tot.toml") == {
        "direct": (0.073, *yao),
        "cot": (0.04, *yao),
        "self_consistency:samples=100,max_steps=100": (0.09, *yao),
        "tot:breadth=5,beam=1,depth=3,max_steps=19": (0.45, *yao),
        "tot:breadth=5,beam=5,depth=3,max_steps=67": (0.74, *yao),
    }
    assert all("2305.10601" in str(p.url) for p in written.published.values())


def test_reflexion_on_humaneval_against_the_papers_gpt_4_figures():
    shinn = ("GPT-4", "Shinn et al. 2023")
    assert figures("humaneval-reflexion.toml") == {
        "direct": (0.801, *shinn),
        "reflexion:check=self_tests": (0.91, *shinn),
    }
