"""Imported by the forkserver of local process rollouts (``tau_tui.workers.process_rollout``): litellm, once, with
the collector off and frozen, so every worker forked from the server starts with it in memory instead of
spending seconds of CPU importing it again."""

from tau_tui.llm.litellm_transport import import_frozen

import_frozen()
