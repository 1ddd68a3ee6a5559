"""One file per reusable widget: run_table, trajectory_view, state_tree, rich_pane, info_line."""
