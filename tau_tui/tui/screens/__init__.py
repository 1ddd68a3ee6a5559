"""One file per screen.

runs.RunsScreen (the default screen) → trajectory.TrajectoryScreen (Enter);
modal helpers: help.HelpScreen (?), filters.FilterScreen, picker.PickerScreen,
text_view.TextViewScreen. Screens planned by later issues go here too:
a per-file metrics screen (issue 5) and the rollout / play-as-user /
play-as-agent screens (issue 6); the trajectory screen's side tabs take the
evaluation pane (``TrajectoryScreen.SIDE_TABS``).
"""
