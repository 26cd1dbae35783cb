"""Models as a grid axis, in reports: when runs are on several models, every summary,
plot and comparison keeps them apart, naming each arm after its model."""

from __future__ import annotations

import pandas as pd


def model_keys(frame: pd.DataFrame) -> list[str]:
    """["model"] when the runs are on several models (a model axis), so every summary,
    plot and comparison keeps them apart; [] for one model, as tables always were."""
    # guard: tables-keep-models-apart
    return ["model"] if "model" in frame and frame["model"].nunique() > 1 else []


def config_labels(summary: pd.DataFrame) -> list[str]:
    """Each summary row's name in a plot or a list: the arm, after its model when the
    summary holds several."""
    if "model" not in summary:
        return [str(arm) for arm in summary["arm"]]
    return [model_and_arm(m, a) for m, a in zip(summary["model"], summary["arm"], strict=True)]


#: Between a model and an arm in an arm's name where runs are on several models.
MODEL_AND_ARM = " · "


def model_and_arm(model: object, arm: object) -> str:
    return f"{model}{MODEL_AND_ARM}{arm}"


def arms_by_model(frame: pd.DataFrame) -> pd.DataFrame:
    """The runs with each arm named after its model, so grouping by arm keeps models apart."""
    return frame.assign(arm=frame["model"].astype(str) + MODEL_AND_ARM + frame["arm"].astype(str))
