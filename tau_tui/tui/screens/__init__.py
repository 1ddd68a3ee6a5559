"""One file per screen.

runs.RunsScreen (the default screen) → trajectory.TrajectoryScreen (Enter),
with its Eval side tab, and from there fork.ForkScreen (b) →
compare.CompareScreen; metrics.MetricsScreen (m, per file); rollout.RolloutScreen
(n, a form: the rollout then runs in the app and lands in the runs table);
play_setup.PlaySetupScreen (p) → play.PlayScreen, whose tool calls go
through tool_form.ToolFormScreen. Modal helpers: help.HelpScreen (?),
filters.FilterScreen, picker.PickerScreen, text_view.TextViewScreen.
"""
