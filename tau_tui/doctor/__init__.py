"""The benchmark doctor: what is wrong with the benchmark (its tasks, its tools), not only with the agent.

``task_rules``: rules over a domain's task definitions (``TaskRule``, one registry entry each);
``sim_rules``: rules over replayed recordings (``SimRule``), domain invariants among them
(``tau_tui.env.invariants``); ``clusters``: failures grouped across files; ``noise``: flip rates where a
task has k ≥ 2 trials. Headless: the CLI (``tau-tui doctor``) and the TUI's doctor screen call it.
"""
