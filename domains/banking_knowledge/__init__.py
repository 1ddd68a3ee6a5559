"""tau2's banking_knowledge domain (τ³-Banking): Rho-Bank's customer service with a 698-document knowledge base.

Reads tau2's data folder: ``db.json`` (the 23-table ``TransactionalDB``),
``documents/*.json`` (the knowledge base), ``prompts/`` (one policy template
per retrieval variant) and the tasks from ``tasks/task_*.json`` — tau2 reads
that folder, not ``tasks.json``, whose entries partly differ.

The agent and the customer share one DB. Discoverable tools are unlocked,
given and called through wrapper tools (``tools.py``); the unlocks live with
the episode's toolkit, the calls are logged in hashed tables. The task's
read-log allowlist (the discoverable tools its reference actions call) is set
when an environment is bound to the task. The retrieval variant
(``variant``, tau2's ``retrieval_config``) picks the agent's search tools and
policy text; it never changes a verdict, since every retrieval tool is
read-only. Without a variant an environment is built as ``bm25_grep`` (the
variant tau2's verdicts in the corpus were computed with; tau2's own default,
``alltools``, needs OpenAI embeddings and a shell sandbox).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tau_tui.domains import Domain, DomainError, read_data_file
from tau_tui.env import DBSchema, Environment, ToolType, make_store
from tau_tui.env.invariants import Invariant, register_invariant
from tau_tui.model.tasks import Task

from .data_model import TransactionalDB
from .invariants import ids_are_keys, users_exist
from .retrieval import DEFAULT_VARIANT, KnowledgeBase, KnowledgeToolsWithKBSearchAndGrep, Variant, resolve_variant
from .tools import KnowledgeTools
from .user_tools import KnowledgeUserTools

SCHEMA = DBSchema(TransactionalDB)

# The agent's search tools across tau2's retrieval variants, none of which mutates state. A recording made with
# another variant (the leaderboard's alltools: KB_search_bm25, KB_search_dense, shell) calls some this
# environment lacks; replay skips them as reads, not as hallucinated tools (tau2 skips both, so no verdict moves).
RETRIEVAL_TOOLS = {
    "KB_search": ToolType.READ,
    "grep": ToolType.READ,
    "KB_search_bm25": ToolType.READ,
    "KB_search_dense": ToolType.READ,
    "shell": ToolType.READ,
    "rewrite_context": ToolType.WRITE,
}


def read_log_allowlist(task: Task | None) -> set[str]:
    """The discoverable agent tools the task's reference actions call (their reads are logged, so hashed)."""
    names: set[str] = set()
    criteria = task.evaluation_criteria if task is not None else None
    for action in (criteria.actions or []) if criteria is not None else []:
        if action.name == "call_discoverable_agent_tool":
            name = (action.arguments or {}).get("agent_tool_name")
            if name:
                names.add(name)
    return names


class BankingEnvironment(Environment):
    """The banking environment: binding a task sets its read-log allowlist (and, for golden_retrieval, the policy)."""

    def __init__(self, *args: Any, variant: Variant, knowledge: KnowledgeBase, data_dir: Path, **kwargs: Any):
        self.variant = variant
        self.knowledge = knowledge
        self.data_dir = data_dir
        super().__init__(*args, **kwargs)

    log_tables = ("agent_discoverable_tools", "user_discoverable_tools", "user_discoverable_tool_calls")

    def _other_variant_tool(self, name: Any) -> bool:
        return name in RETRIEVAL_TOOLS and not super().has_tool(name)

    def has_tool(self, name: Any) -> bool:
        return super().has_tool(name) or self._other_variant_tool(name)

    def mutates(self, name: str) -> bool:
        return False if self._other_variant_tool(name) else super().mutates(name)

    def tool_type(self, name: str) -> ToolType | None:
        return RETRIEVAL_TOOLS[name] if self._other_variant_tool(name) else super().tool_type(name)

    def side_of(self, name: str) -> str | None:
        return "assistant" if self._other_variant_tool(name) else super().side_of(name)

    def recorded_info(self) -> dict[str, Any]:
        return {"retrieval_config": self.variant.name}

    def bind_task(self, task: Task | None) -> None:
        if isinstance(self.agent, KnowledgeTools):
            self.agent.set_read_log_allowlist(read_log_allowlist(task))
        if self.variant.task_specific:
            self.policy = self.variant.policy(self.data_dir, self.knowledge, task)


class BankingDomain(Domain):
    name = "banking_knowledge"
    toolkits = (KnowledgeToolsWithKBSearchAndGrep, KnowledgeUserTools)

    @classmethod
    def declared_tool_names(cls) -> frozenset[str]:
        """The toolkits' tools and every retrieval variant's search tools."""
        return super().declared_tool_names() | frozenset(RETRIEVAL_TOOLS)

    def __init__(self, data_dir: Path | None):
        super().__init__(data_dir)
        self._knowledge: KnowledgeBase | None = None

    def knowledge(self) -> KnowledgeBase:
        if self._knowledge is None:
            self._knowledge = KnowledgeBase.load(self.require_data() / "documents")
        return self._knowledge

    def variant(self, name: str | None) -> Variant:
        try:
            return resolve_variant(name or DEFAULT_VARIANT)
        except ValueError as exc:
            raise DomainError(str(exc)) from None

    def policy(self, solo: bool = False, variant: str | None = None) -> str:
        return self.variant(variant).policy(self.require_data(), self.knowledge(), None)

    def new_environment(self, solo: bool = False, variant: str | None = None) -> BankingEnvironment:
        if solo:
            raise ValueError("banking_knowledge domain does not support solo mode")
        data = self.require_data()
        chosen = self.variant(variant)
        tree = self.pristine("db", SCHEMA, lambda: read_data_file(data / "db.json"))
        store = make_store(SCHEMA, tree)
        knowledge = self.knowledge()
        agent = chosen.toolkit(store, knowledge)
        user = KnowledgeUserTools(store)
        return BankingEnvironment(
            domain_name="banking_knowledge",
            policy=chosen.policy(data, knowledge, None),
            agent=agent,
            user=user,
            variant=chosen,
            knowledge=knowledge,
            data_dir=data,
        )

    def task_file(self) -> Path:
        return self.require_data() / "tasks"

    def tasks(self) -> dict[str, Task]:
        """``tasks/task_*.json`` in name order, as tau2 reads them."""
        if self._tasks is None:
            folder = self.task_file()
            if not folder.is_dir():
                raise DomainError(f"{folder}: missing task folder")
            tasks: dict[str, Task] = {}
            for path in sorted(folder.glob("task_*.json")):
                try:
                    task = Task.model_validate(read_data_file(path))
                except Exception as exc:  # noqa: BLE001 - tau2 skips a task file it cannot read, with a warning
                    self.warnings.append(f"{path}: skipped, not a task ({(str(exc).splitlines() or [''])[0]})")
                    continue
                tasks[task.id] = task
            self._tasks = tasks
        return self._tasks

    def splits(self) -> dict[str, list[str]]:
        return {}


DOMAIN = BankingDomain


def create(data_dir: Path | None) -> BankingDomain:
    return BankingDomain(data_dir)


# What the data model promises after every write (domains/banking_knowledge/invariants.py); the doctor checks them.
for _invariant in (
    Invariant("banking-ids-are-keys", "banking_knowledge", "a record's own id field is its key", ids_are_keys),
    Invariant(
        "banking-users-exist",
        "banking_knowledge",
        "accounts, cards and card payments name a user that exists",
        users_exist,
    ),
):
    register_invariant(_invariant)
