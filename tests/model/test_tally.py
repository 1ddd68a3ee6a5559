"""``model.tally``: items grouped and keys counted in a registry's order, the unlisted keys after, none dropped."""

from __future__ import annotations

from tau_tui.model.tally import counted, grouped


def test_grouped_puts_the_listed_keys_first_then_the_others_as_they_come() -> None:
    items = [("b", 1), ("x", 2), ("a", 3), (None, 4), ("b", 5), ("y", 6)]
    groups = grouped(items, lambda item: item[0], ["a", "b", "c"])
    assert list(groups) == ["a", "b", "x", "y"]  # c has no item; None is left out
    assert groups["b"] == [("b", 1), ("b", 5)]  # each group in item order


def test_counted_lists_every_key_of_the_order_with_zeros_then_the_others() -> None:
    assert counted(["b", "x", "b"], ["a", "b"]) == {"a": 0, "b": 2, "x": 1}
    assert list(counted(["z", "y", "z"])) == ["z", "y"]
