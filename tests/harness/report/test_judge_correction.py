"""Accuracy corrected for a judge's error (loopbench.harness.stats.judge_correction): Rogan-Gladen's
estimate, its refusal when the judge is no better than chance, and intervals in which a draw
that cannot be corrected counts as anything."""

import math

import numpy as np
import pytest

from loopbench.harness.stats.judge_correction import (
    JudgeRates,
    corrected,
    corrected_accuracy,
    corrected_difference,
)


def test_the_estimate_undoes_the_judges_error() -> None:
    # True accuracy 0.6, sensitivity 0.9, specificity 0.8: the judge passes 0.62.
    judged = 0.6 * 0.9 + 0.4 * 0.2
    assert corrected(judged, 0.9, 0.8) == pytest.approx(0.6)


def test_a_judge_no_better_than_chance_corrects_nothing() -> None:
    assert math.isnan(corrected(0.5, 0.5, 0.5))
    assert math.isnan(corrected(0.5, 0.3, 0.6))
    result = corrected_accuracy(np.arange(10), [1, 0] * 5, JudgeRates(5, 5, 5, 5))
    assert math.isnan(result.estimate) and result.judged == 0.5


def test_the_interval_holds_the_estimate_and_narrows_with_labels() -> None:
    tasks, judged = np.arange(400), np.tile([1, 1, 1, 0, 0], 80)
    few = corrected_accuracy(tasks, judged, JudgeRates(9, 1, 8, 2))
    many = corrected_accuracy(tasks, judged, JudgeRates(90, 10, 80, 20))
    assert few.estimate == pytest.approx(many.estimate)
    assert few.low <= few.estimate <= few.high and many.low <= many.estimate <= many.high
    assert many.high - many.low < few.high - few.low


def test_draws_that_cannot_be_corrected_count_as_anything() -> None:
    # Barely better than chance on two labels: most draws have se + sp <= 1.
    result = corrected_accuracy(np.arange(50), [1, 0] * 25, JudgeRates(1, 0, 1, 0))
    assert (result.low, result.high) == (0.0, 1.0)


def test_each_arm_is_corrected_with_its_own_rates() -> None:
    # Both arms truly right on 60%; the judge passes a's wrong answers more often.
    rng = np.random.default_rng(3)
    truth_a, truth_b = rng.random(2000) < 0.6, rng.random(2000) < 0.6
    judged_a = np.where(truth_a, rng.random(2000) < 0.9, rng.random(2000) < 0.5)
    judged_b = np.where(truth_b, rng.random(2000) < 0.9, rng.random(2000) < 0.1)
    rates = (JudgeRates(900, 100, 500, 500), JudgeRates(900, 100, 900, 100))
    result = corrected_difference(np.arange(2000), (judged_a, judged_b), rates)
    assert result.judged > 0.1  # the judge's own difference credits arm a
    assert result.low <= 0 <= result.high
    assert abs(result.estimate) < 0.06


def test_an_arm_is_corrected_with_its_own_rates_when_its_labels_allow() -> None:
    from loopbench.harness.results.judge_calibration import Calibration, LabelCounts
    from loopbench.harness.stats.judge_correction import arm_rates

    own = LabelCounts(true_pass=9, false_fail=1, true_fail=3, false_pass=7)
    right_only = LabelCounts(true_pass=5, false_fail=0, true_fail=0, false_pass=0)
    pooled = LabelCounts(true_pass=14, false_fail=1, true_fail=3, false_pass=7)
    calibration = Calibration(
        labels_file="l.csv",
        labels_sha256="0",
        pooled=pooled,
        arms={"cot": own, "direct": right_only},
    )
    assert arm_rates(calibration, "cot") == JudgeRates(9, 1, 3, 7)
    # No wrong answer of direct labelled: its specificity unknown, the pooled rates apply.
    assert arm_rates(calibration, "direct") == JudgeRates(14, 1, 3, 7)
    assert arm_rates(calibration, "unlabelled") == JudgeRates(14, 1, 3, 7)
