"""The shipped experiment files that set a paper's figures beside the runs: each figure
names one of the file's arms, with the paper's model and source. (Loading a file does not
load its task set; running game24-tot.toml needs the game24 set.)"""

from pathlib import Path

from loopbench.harness.arms import arm_identity, parse_arms
from loopbench.harness.config import RunConfig, load_experiment

EXPERIMENTS = Path(__file__).parents[2] / "experiments"


def checked_experiment(path: Path) -> RunConfig:
    """The file's settings, its arms parsed and its figures checked as a run checks them."""
    written = load_experiment(path)
    written.check_published({arm.spec for arm in parse_arms(written.arms)})
    return written


def figures(name: str) -> dict[str, tuple[float, str, str]]:
    """The file's figures by arm, its prompt files named by their stems as arms are."""
    written = checked_experiment(EXPERIMENTS / name)
    published = written.published.items()
    return {arm_identity(arm): (p.accuracy, p.model, p.source) for arm, p in published}


def test_tree_of_thoughts_on_game_of_24_against_the_papers_gpt_4_figures():
    written = checked_experiment(EXPERIMENTS / "game24-tot.toml")
    assert (written.tasks, written.slice) == ("game24", "hard-100")
    yao = ("GPT-4", "Yao et al. 2023")
    assert figures("game24-tot.toml") == {
        "direct": (0.073, *yao),
        "cot": (0.04, *yao),
        "self_consistency:max_steps=100,samples=100": (0.09, *yao),
        "tot:beam=1,breadth=5,depth=3,max_steps=19,prompts=game24-tot": (0.45, *yao),
        "tot:beam=5,breadth=5,depth=3,max_steps=67,prompts=game24-tot": (0.74, *yao),
    }
    assert all("2305.10601" in str(p.url) for p in written.published.values())


def test_reflexion_on_humaneval_against_the_papers_gpt_4_figures():
    shinn = ("GPT-4", "Shinn et al. 2023")
    assert figures("humaneval-reflexion.toml") == {
        "direct": (0.801, *shinn),
        "reflexion:check=self_tests": (0.91, *shinn),
    }
