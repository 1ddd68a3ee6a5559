"""Width sharing and middle elision (``tui.layout``): the pure functions behind every fitted column."""

from __future__ import annotations

from tau_tui.views.layout import (
    TASK_MIN,
    Share,
    distinct_starts,
    elide,
    fitting_count,
    middle_elide,
    share_widths,
    task_column_width,
    width_apart,
)

CALIBRATE_FILES = ["calibrate_20261201_053850", "calibrate_20261201_053934", "calibrate_20261201_054010"]
SHARED = "[mms_issue]airplane_mode_on|bad_network_preference|break_apn_mms_setting|break_app_"
TELECOM = [
    SHARED + "both_permissions|unseat_sim_card[PERSONA:Hard]",
    SHARED + "sms_permission|unseat_sim_card[PERSONA:Hard]",
    SHARED + "sms_permission|unseat_sim_card[PERSONA:None]",
]
DEEP = [  # telecom ids that differ deep inside: at 20 columns two read the same
    "[mms_issue]airplane_mode_on|bad_network_preference|break_app_both_permissions|data_usage_exceeded|"
    "unseat_sim_card|user_abroad_roaming_disabled_on[PERSONA:Hard]",
    "[mms_issue]airplane_mode_on|break_app_both_permissions[PERSONA:Hard]",
    "[mms_issue]bad_network_preference|break_app_sms_permission|user_abroad_roaming_disabled_on[PERSONA:Hard]",
    "[mms_issue]break_apn_mms_setting|user_abroad_roaming_enabled_off[PERSONA:Hard]",
]


def test_middle_elide_keeps_head_and_tail() -> None:
    assert (
        middle_elide("calibrate_20261201_053850.json", 20) == "calibrate_…053850.json"[:10] + "…" + "053850.json"[-9:]
    )
    assert middle_elide("short", 10) == "short"
    assert len(middle_elide("x" * 50, 12)) == 12
    assert middle_elide("abc", 1) == "…"


def test_file_names_differing_only_at_the_end_stay_apart_at_any_width() -> None:
    starts = distinct_starts(CALIBRATE_FILES)
    assert starts[CALIBRATE_FILES[0]] == len("calibrate_20261201_")  # the token that differs is kept whole
    for width in (10, 12, 16, 22):
        shown = [elide(name, width, starts[name]) for name in CALIBRATE_FILES]
        assert len(set(shown)) == 3, shown
        assert all(len(s) <= width for s in shown)
        assert [s[-6:] for s in shown] == ["053850", "053934", "054010"]


def test_telecom_task_ids_keep_where_they_differ_and_their_tail() -> None:
    starts = distinct_starts(TELECOM)
    for width in (14, 20, 30):
        shown = [elide(task, width, starts[task]) for task in TELECOM]
        assert len(set(shown)) == 3, shown
        assert all(len(s) == width for s in shown)
    shown = [elide(task, 30, starts[task]) for task in TELECOM]
    assert "both" in shown[0] and "sms" in shown[1] and shown[1].endswith("Hard]") and shown[2].endswith("None]")


def test_width_apart_widens_only_as_far_as_telling_every_value_apart_needs() -> None:
    starts = distinct_starts(DEEP)
    assert len({elide(v, 20, starts[v]) for v in DEEP}) < 4  # at 20 two read the same
    width = width_apart(DEEP, 20)
    assert 20 < width < max(map(len, DEEP))
    assert len({elide(v, width, starts[v]) for v in DEEP}) == 4
    assert len({elide(v, width - 1, starts[v]) for v in DEEP}) < 4  # the narrowest such width
    assert width_apart(TELECOM, 14) == 14  # already apart: the width asked for
    assert width_apart(["a", "b"], 10) == 10 and width_apart([], 5) == 5


def test_distinct_start_of_a_prefix_of_another_value_is_zero() -> None:
    starts = distinct_starts(["warehouse", "warehouse_cassette", "aftersales"])
    assert starts == {"warehouse": 0, "warehouse_cassette": len("warehouse"), "aftersales": 0}


def test_share_widths_gives_minimums_then_the_rest_by_share_up_to_natural() -> None:
    shares = [Share(10, 2, 40), Share(10, 1, 12), Share(3)]
    assert share_widths(shares, 23) == [10, 10, 3]
    widths = share_widths(shares, 40)
    assert widths[1] == 12 and widths[2] == 3 and sum(widths) == 40  # the capped column's part goes to the other
    assert share_widths(shares, 200) == [40, 12, 3]  # nothing grows past its content


def test_fitting_count_counts_whole_columns() -> None:
    assert fitting_count([5, 5, 5], 12) == 2  # 6 + 6 cells; the third would need 18
    assert fitting_count([5, 5, 5], 18) == 3
    assert fitting_count([5], 3) == 0


def test_task_column_takes_what_the_other_columns_leave_within_its_bounds() -> None:
    tasks = [f"task_{i:02d}_" + "x" * 40 for i in range(3)]
    # 120 - frame 4 - padding 2 × 4 columns - 30 for the others: 78, more than the longest id needs
    assert task_column_width(tasks, [10, 10, 10], 120) == len(tasks[0])
    assert task_column_width(tasks, [10, 10, 10], 80) == 80 - 4 - 8 - 30
    assert task_column_width(tasks, [10, 10, 10], 40) == TASK_MIN  # never narrower while the ids are longer
    assert task_column_width(["a", "b"], [10], 40) == len("task")  # at most what the heading and ids need
    assert task_column_width(DEEP, [60], 80) == width_apart(DEEP, TASK_MIN) > TASK_MIN  # widened to read apart
