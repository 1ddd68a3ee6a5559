"""The statistics of ``tau_tui.evaluate.stats`` against worked examples (by hand, and scipy where installed)."""

from __future__ import annotations

import math

import pytest

from tau_tui.evaluate.stats import (
    bootstrap_tasks,
    confidence,
    flip_rate,
    group_by_task,
    mcnemar_exact,
    noise_floor,
    paired_bootstrap,
    wilson,
)


def test_mcnemar_worked_examples_by_hand() -> None:
    # b=1, c=9: n=10, P(X<=1) = (1 + 10) / 1024, two-sided doubles it.
    assert mcnemar_exact(1, 9) == pytest.approx(22 / 1024)
    assert mcnemar_exact(9, 1) == pytest.approx(22 / 1024)
    # an even split is no evidence at all
    assert mcnemar_exact(5, 5) == 1.0
    assert mcnemar_exact(0, 0) == 1.0
    # b=0, c=6: 2 / 64
    assert mcnemar_exact(0, 6) == pytest.approx(2 / 64)
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 2)


def test_mcnemar_matches_scipy_binomtest() -> None:
    scipy_stats = pytest.importorskip("scipy.stats", reason="scipy is the dev-only oracle for this check")
    for b, c in [(1, 9), (3, 12), (7, 4), (0, 1), (20, 31), (2, 2)]:
        assert mcnemar_exact(b, c) == pytest.approx(scipy_stats.binomtest(b, b + c, 0.5).pvalue, rel=1e-12)


def test_wilson_worked_example() -> None:
    # 8 of 10: the textbook Wilson 95% interval is [0.4902, 0.9433]
    iv = wilson(8, 10)
    assert iv is not None
    assert iv.estimate == 0.8
    assert iv.low == pytest.approx(0.4902, abs=1e-4)
    assert iv.high == pytest.approx(0.9433, abs=1e-4)
    assert wilson(0, 0) is None
    zero = wilson(0, 20)
    assert zero is not None
    assert zero.low == 0.0 and 0.15 < zero.high < 0.17  # not the degenerate [0, 0] of the Wald interval


def test_wilson_matches_scipy() -> None:
    scipy_stats = pytest.importorskip("scipy.stats", reason="scipy is the dev-only oracle for this check")
    for k, n in [(8, 10), (0, 20), (34, 40), (1, 1), (50, 114)]:
        ci = scipy_stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
        iv = wilson(k, n)
        assert iv is not None
        assert (iv.low, iv.high) == pytest.approx((ci.low, ci.high), abs=1e-9)


def test_bootstrap_approaches_the_normal_interval_of_a_mean() -> None:
    # 300 tasks, one trial each, a third pass: the bootstrap SE is close to sqrt(p(1-p)/n)
    by_task = {str(i): [1.0 if i % 3 == 0 else 0.0] for i in range(300)}
    iv = bootstrap_tasks(by_task, 1, seed=7, resamples=4000).avg_reward
    p = 1 / 3
    half = 1.96 * math.sqrt(p * (1 - p) / 300)
    assert iv is not None
    assert iv.estimate == pytest.approx(p)
    assert iv.low == pytest.approx(p - half, abs=0.012)
    assert iv.high == pytest.approx(p + half, abs=0.012)
    assert iv.seed == 7 and iv.resamples == 4000


def test_bootstrap_resamples_tasks_not_simulations() -> None:
    # Four identical trials per task carry no more information than one: the interval is as wide.
    one = {str(i): [1.0 if i % 2 else 0.0] for i in range(60)}
    four = {t: r * 4 for t, r in one.items()}
    a = bootstrap_tasks(one, 1, seed=3).avg_reward
    b = bootstrap_tasks(four, 1, seed=3).avg_reward
    assert a is not None
    assert b is not None
    assert (a.low, a.high) == pytest.approx((b.low, b.high))
    # pass^4 of identical trials equals pass^1 for every task
    res = bootstrap_tasks(four, 4, seed=3)
    assert sorted(res.pass_hat_k) == [1, 2, 3, 4]
    assert res.pass_hat_k[4].estimate == pytest.approx(0.5)


def test_bootstrap_is_reproducible_by_seed_and_degenerate_when_constant() -> None:
    by_task = {str(i): [float(i % 2), float(i % 3 == 0)] for i in range(40)}
    assert bootstrap_tasks(by_task, 2, seed=11) == bootstrap_tasks(by_task, 2, seed=11)
    assert bootstrap_tasks(by_task, 2, seed=11).avg_reward != bootstrap_tasks(by_task, 2, seed=12).avg_reward
    constant = bootstrap_tasks({str(i): [1.0] for i in range(10)}, 1)
    assert constant.avg_reward is not None
    assert (constant.avg_reward.low, constant.avg_reward.high) == (1.0, 1.0)
    assert bootstrap_tasks({}, 1).avg_reward is None


def test_pass_hat_k_estimate_matches_the_metrics_definition() -> None:
    # task a: 2 of 3 pass (pass^2 = C(2,2)/C(3,2) = 1/3); task b: 3 of 3 (1.0) -> mean 2/3
    res = bootstrap_tasks({"a": [1.0, 1.0, 0.0], "b": [1.0, 1.0, 1.0]}, 3, seed=0)
    assert res.pass_hat_k[2].estimate == pytest.approx(2 / 3)
    assert res.pass_hat_k[3].estimate == pytest.approx(0.5)


def test_paired_bootstrap() -> None:
    same_gain = {str(i): [(0.0, 1.0)] for i in range(20)}
    iv = paired_bootstrap(same_gain, seed=5)
    assert iv is not None
    assert (iv.estimate, iv.low, iv.high) == (1.0, 1.0, 1.0)
    assert iv.seed == 5 and "paired" in iv.method
    # 200 tasks, B wins 60, loses 20, ties the rest: mean diff 0.2, SE ~ sqrt((0.4 - 0.04) / 200)
    pairs = {str(i): [(0.0, 1.0) if i < 60 else (1.0, 0.0) if i < 80 else (1.0, 1.0)] for i in range(200)}
    iv = paired_bootstrap(pairs, seed=1, resamples=4000)
    half = 1.96 * math.sqrt((80 / 200 - 0.2**2) / 200)
    assert iv is not None
    assert iv.estimate == pytest.approx(0.2)
    assert iv.low == pytest.approx(0.2 - half, abs=0.012)
    assert iv.high == pytest.approx(0.2 + half, abs=0.012)
    assert paired_bootstrap({}) is None


def test_paired_bootstrap_against_scipy() -> None:
    scipy_stats = pytest.importorskip("scipy.stats", reason="scipy is the dev-only oracle for this check")
    diffs = [1.0] * 30 + [-1.0] * 12 + [0.0] * 58
    ours = paired_bootstrap({str(i): [(0.0, d)] for i, d in enumerate(diffs)}, seed=2, resamples=5000)
    theirs = scipy_stats.bootstrap(
        (diffs,), lambda x, axis: x.mean(axis=axis), method="percentile", n_resamples=5000, random_state=2
    ).confidence_interval
    assert ours is not None
    assert ours.low == pytest.approx(theirs.low, abs=0.02)
    assert ours.high == pytest.approx(theirs.high, abs=0.02)


def test_flip_rate_by_hand() -> None:
    # [1,0,1,0]: 2*2*2/(4*3) = 2/3; [1,1]: 0; [0]: one trial, left out
    flips = flip_rate({"a": [1.0, 0.0, 1.0, 0.0], "b": [1.0, 1.0], "c": [0.0]})
    assert flips.tasks_with_trials == 2
    assert flips.tasks_flipping == 1
    assert flips.mean_pairwise == pytest.approx(1 / 3)
    assert "n/a" in flip_rate({"a": [1.0]}).text()


def test_noise_floor_by_hand() -> None:
    # variances: [1,0] -> 0.5, [1,1] -> 0; v = 0.25, T = 2: 1.96 * sqrt(2 * 0.25 / 2) = 0.98 -> 98 points
    floor = noise_floor({"a": [1.0, 0.0], "b": [1.0, 1.0]})
    assert floor.points == pytest.approx(100 * 1.959964 * 0.5, rel=1e-5)
    assert "under 98.0 points are within trial-to-trial noise" in floor.text() and "2 tasks with trials" in floor.text()
    wide = noise_floor({"a": [1.0, 0.0]})  # 196 points: more than the scale has
    assert wide.points is not None
    assert wide.points > 100 and "any difference is within trial-to-trial noise" in wide.text()
    none = noise_floor({"a": [1.0], "b": [0.0]})
    assert none.reason is not None
    assert none.points is None and "two or more" in none.reason


def test_confidence_block_prints_the_seed_and_leaves_unscored_out() -> None:
    by_task = group_by_task([("a", 1.0), ("a", None), ("b", 0.0), ("b", 1.0)])
    assert by_task == {"a": [1.0], "b": [0.0, 1.0]}
    conf = confidence(by_task, 1, seed=42)
    assert conf.success_rate is not None
    assert conf.success_rate.estimate == pytest.approx(2 / 3)
    text = "\n".join(conf.lines())
    assert "bootstrap seed 42" in text and "Wilson" in text and "noise floor" in text
    assert conf.to_json()["avg_reward"]["seed"] == 42
