"""pass^k, pass@k and the per-file metrics against hand-computed values (tau2-facts §6)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from tau_tui.evaluate import MetricOutcome, compute_metrics, pass_at_k, pass_hat_k


def outcomes(
    task_id: str, rewards: Sequence[float | None], termination: str | None = "user_stop"
) -> list[MetricOutcome]:
    return [MetricOutcome(task_id, r, termination) for r in rewards]


def test_pass_hat_k_hand_computed() -> None:
    # 4 trials, 3 successes: C(3,k)/C(4,k)
    assert [pass_hat_k(4, 3, k) for k in (1, 2, 3, 4)] == [3 / 4, 3 / 6, 1 / 4, 0.0]
    assert [pass_hat_k(4, 1, k) for k in (1, 2)] == [1 / 4, 0.0]
    assert pass_hat_k(3, 3, 3) == 1.0


def test_pass_at_k_hand_computed() -> None:
    # 4 trials, 1 success: 1 - C(3,k)/C(4,k)
    assert [pass_at_k(4, 1, k) for k in (1, 2, 3, 4)] == [1 / 4, 1 - 3 / 6, 1 - 1 / 4, 1.0]
    assert pass_at_k(4, 0, 2) == 0.0


def test_k_larger_than_trials_raises() -> None:
    with pytest.raises(ValueError):
        pass_hat_k(2, 1, 3)


def test_run_metrics_average_over_tasks() -> None:
    metrics = compute_metrics(outcomes("1", [1, 1, 1, 0]) + outcomes("2", [0, 1, 0, 0]), num_trials=4)
    assert metrics.max_k == 4
    assert metrics.pass_hat_k == pytest.approx({1: (0.75 + 0.25) / 2, 2: (0.5 + 0) / 2, 3: 0.125, 4: 0.0})
    assert metrics.pass_at_k == pytest.approx({1: 0.5, 2: (1.0 + 0.5) / 2, 3: (1.0 + 0.75) / 2, 4: 1.0})
    assert metrics.avg_reward == pytest.approx(4 / 8)  # over simulations, not tasks
    assert [(t.task_id, t.trials, t.successes) for t in metrics.tasks] == [("1", 4, 3), ("2", 4, 1)]


def test_success_tolerance_and_partial_rewards() -> None:
    metrics = compute_metrics(outcomes("1", [1 - 1e-7, 0.5]))
    assert metrics.tasks[0].successes == 1 and metrics.avg_reward == pytest.approx(0.75, abs=1e-6)


def test_max_k_is_capped_by_the_fewest_trials_and_num_trials() -> None:
    uneven = outcomes("1", [1, 1, 1]) + outcomes("2", [1, 0])
    assert compute_metrics(uneven).max_k == 2
    assert compute_metrics(uneven, num_trials=1).max_k == 1
    assert list(compute_metrics(uneven).pass_hat_k) == [1, 2]


def test_infrastructure_errors_are_left_out_and_counted() -> None:
    data = outcomes("1", [1, 0]) + [MetricOutcome("1", 0.0, "infrastructure_error")]
    metrics = compute_metrics(data, num_trials=3)
    assert metrics.infrastructure_errors == 1 and metrics.n_scored == 2 and metrics.max_k == 2
    assert metrics.pass_hat_k == pytest.approx({1: 0.5, 2: 0.0})
    assert metrics.terminations == {"infrastructure_error": 1, "user_stop": 2}


def test_unscored_rewards_are_left_out_not_failed() -> None:
    data = outcomes("1", [1, None]) + outcomes("2", [None])
    metrics = compute_metrics(data)
    assert metrics.n_unscored == 2 and metrics.n_scored == 1
    assert metrics.avg_reward == 1.0 and metrics.pass_hat_k == {1: 1.0}


def test_termination_counts_and_empty_runs() -> None:
    data = outcomes("1", [1], "user_stop") + outcomes("2", [0], "max_steps") + outcomes("3", [0], "max_steps")
    assert compute_metrics(data).terminations == {"max_steps": 2, "user_stop": 1}
    empty = compute_metrics([])
    assert empty.avg_reward is None and empty.pass_hat_k == {} and empty.max_k == 0


def test_json_keys_are_strings() -> None:
    data = compute_metrics(outcomes("7", [1, 0])).to_json()
    assert data["pass_hat_k"] == {"1": 0.5, "2": 0.0} and data["pass_at_k"] == {"1": 0.5, "2": 1.0}
    assert data["tasks"][0]["task"] == "7"
