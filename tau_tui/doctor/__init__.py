"""The benchmark doctor: what is wrong with the benchmark (its tasks, its tools), not only with the agent.

``rules``: the one rule registry, each rule with its advice (its effect on scores, what to do, the text to
file upstream); ``task_rules``: rules over a domain's task definitions; ``sim_rules``: rules over replayed
recordings, domain invariants among them (``tau_tui.env.invariants``); ``clusters``: failures grouped across
files; ``noise``: flip rates where a task has k ≥ 2 trials; ``report``: text, Markdown and detail-pane parts.
Headless: the CLI (``tau-tui doctor``) and the TUI's doctor screen call it.
"""
