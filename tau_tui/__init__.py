"""tau-tui: a terminal workbench for tau2-bench style agent evaluations.

The headless core (model, env, replay, evaluate, rollout) never imports
textual; only ``tau_tui.tui`` does.
"""

__version__ = "0.1.0"
