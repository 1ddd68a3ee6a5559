"""Retrieval variants (tau2's ``retrieval_config``): the agent's knowledge-base tools and its policy text.

A variant names a policy template under ``prompts/`` (``{{component:NAME}}``
pulls in ``prompts/components/NAME.md``), how the knowledge base reaches the
prompt (not at all, whole, or the task's required documents), and which
search tools the agent gets: ``KB_search`` (BM25 with ``rank_bm25``, as tau2,
or dense embeddings through litellm), ``grep`` (a regex over every document,
ranked by match count). Every search tool is a READ tool, so a variant never
changes a replay or a verdict. Variants that need tau2's shell sandbox
(``terminal_use*``, ``alltools*``) or an LLM reranker (``*_reranker*``) are
known by name but refused with a one-line reason.
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tau_tui.env import ToolType, tool

from .tools import KnowledgeTools

DEFAULT_VARIANT = "bm25_grep"
_COMPONENT = re.compile(r"\{\{component:(\w+)\}\}")
_FULL_KB = re.compile(r"\{\{full_knowledge_base\}\}")


@dataclass(frozen=True)
class Document:
    id: str
    title: str
    content: str


@dataclass
class KnowledgeBase:
    """The bank's documents by id (loaded once per domain), with lazily built search indexes."""

    documents: dict[str, Document]
    _indexes: dict[Any, Any] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def load(cls, folder: Path) -> KnowledgeBase:
        from tau_tui.domains import DomainError, read_data_file

        docs: dict[str, Document] = {}
        # tau2's order: the folder's own listing order (not sorted). It decides BM25 and grep ties and the
        # full-KB prompt's order, so sorting here would make those differ from tau2's on the same folder.
        for path in folder.glob("*.json") if folder.is_dir() else []:
            raw = read_data_file(path)
            if not isinstance(raw, dict) or not all(isinstance(raw.get(k), str) for k in ("id", "title", "content")):
                raise DomainError(f"{path}: a document needs string 'id', 'title' and 'content'")
            docs[raw["id"]] = Document(raw["id"], raw["title"], raw["content"])
        return cls(docs)

    def index(self, key: Any, build: Callable[[], Any]) -> Any:
        with self._lock:
            if key not in self._indexes:
                self._indexes[key] = build()
            return self._indexes[key]

    def as_markdown(self, docs: list[Document] | None = None) -> str:
        return "\n\n---\n\n".join(f"## {d.title}\n\n{d.content}" for d in (docs or list(self.documents.values())))


# --- searching ----------------------------------------------------------------------------------
def bm25_search(kb: KnowledgeBase, query: str, top_k: int) -> list[tuple[str, float]]:
    """tau2's BM25: ``rank_bm25.BM25Okapi`` over lower-cased whitespace tokens, best ``top_k``."""
    if not query or not query.strip():
        return []

    def build() -> tuple[Any, list[str]]:
        try:
            from rank_bm25 import BM25Okapi
        except ImportError:
            raise RuntimeError("BM25 search needs the 'rank_bm25' package (pip install 'tau-tui[banking]')") from None
        ids = list(kb.documents)
        return BM25Okapi([kb.documents[i].content.lower().split() for i in ids]), ids

    bm25, ids = kb.index("bm25", build)
    scores = bm25.get_scores(query.lower().split())
    order = sorted(range(len(scores)), key=lambda i: scores[i], reverse=True)[: min(top_k, len(ids))]
    return [(ids[i], float(scores[i])) for i in order]


GREP_SECONDS = 2.0  # the most one grep may take over the whole knowledge base


def grep_search(kb: KnowledgeBase, pattern: str, top_k: int, case_sensitive: bool = False) -> list[tuple[str, float]]:
    """Documents by number of regex matches (a bad regex is searched for literally), as tau2's ``re`` finds them.

    ``re`` decides what the pattern means (valid, or searched for literally); the ``regex`` module, which reads
    such patterns the same way, runs it with a deadline: a pattern that backtracks without end (``(\\w+\\s?)+$``)
    is a ``ValueError`` (the tool's error message) after ``GREP_SECONDS``, never a hang.
    """
    import regex

    if not pattern.strip():
        return []
    flags = 0 if case_sensitive else re.IGNORECASE
    try:
        re.compile(pattern, flags)
        meant = pattern
    except re.error:
        meant = re.escape(pattern)
    compiled = regex.compile(meant, regex.IGNORECASE if flags else 0)
    deadline = time.monotonic() + GREP_SECONDS
    hits = []
    try:
        for doc_id, doc in kb.documents.items():
            hits.append(
                (doc_id, float(len(compiled.findall(doc.content, timeout=max(0.0, deadline - time.monotonic())))))
            )
    except TimeoutError:
        raise ValueError(
            f"the pattern '{pattern}' takes more than {GREP_SECONDS:g} s over the knowledge base "
            "(it backtracks without end); use a simpler one"
        ) from None
    hits = [hit for hit in hits if hit[1]]
    hits.sort(key=lambda hit: hit[1], reverse=True)
    return hits[:top_k]


def dense_search(
    kb: KnowledgeBase, query: str, top_k: int, model: str, api_base: str | None
) -> list[tuple[str, float]]:
    """Cosine similarity of litellm embeddings (documents embedded once per model and endpoint)."""
    if not query or not query.strip():
        return []

    def embed(texts: list[str]) -> list[list[float]]:
        import litellm

        kwargs: dict[str, Any] = {"model": model, "input": texts}
        if api_base:
            kwargs["api_base"] = api_base
        response = litellm.embedding(**kwargs)
        return [list(item["embedding"]) for item in response.data]

    def build() -> tuple[list[str], list[list[float]]]:
        ids = list(kb.documents)
        vectors: list[list[float]] = []
        for start in range(0, len(ids), 64):
            vectors += embed([kb.documents[i].content for i in ids[start : start + 64]])
        return ids, vectors

    ids, vectors = kb.index(("dense", model, api_base), build)
    [q] = embed([query])
    qn = math.sqrt(sum(x * x for x in q)) or 1.0
    scored = []
    for doc_id, vec in zip(ids, vectors, strict=False):
        vn = math.sqrt(sum(x * x for x in vec)) or 1.0
        scored.append((doc_id, sum(a * b for a, b in zip(q, vec, strict=False)) / (qn * vn)))
    scored.sort(key=lambda hit: hit[1], reverse=True)
    return scored[:top_k]


def format_hits(kb: KnowledgeBase, hits: list[tuple[str, float]]) -> str:
    return "\n".join(
        f"{n}. {kb.documents[doc_id].title}\n   ID: {doc_id}\n   Score: {score:.4f}\n"
        f"   Content: {kb.documents[doc_id].content}\n"
        for n, (doc_id, score) in enumerate(hits, 1)
    )


def timed_search(kb: KnowledgeBase, search: Callable[[], list[tuple[str, float]]]) -> str:
    """The search's hits and how long it took, as tau2 writes them: the retrieval, then the post-processing of
    its hits (tau2 times that stage even with no reranker, so its line always names it), then the total."""
    start = time.perf_counter()
    hits = search()
    found = time.perf_counter()
    hits = list(hits)
    done = time.perf_counter()
    retrieval, post = (found - start) * 1000, (done - found) * 1000
    body = format_hits(kb, hits) if hits else "No relevant documents found."
    timing = f"[Timing: retrieval={retrieval:.0f}ms"
    if post > 0:
        timing += f", reranking={post:.0f}ms"
    return f"{body}\n\n{timing}, total={retrieval + post:.0f}ms]"


# --- the agent's search tools (mix-ins of KnowledgeTools; named as tau2 names them: a call missing an argument
# fails with the class in its message, and the agent reads that message) -------------------------------
class KBSearchMixin:
    knowledge: KnowledgeBase
    search_config: dict[str, Any]

    @tool(ToolType.READ)
    def KB_search(self, query: str) -> str:
        """Search the knowledge base for relevant documents.

        Args:
            query: The search query to find relevant documents

        Returns:
            Relevant document excerpts matching the query
        """
        cfg = self.search_config
        if cfg["kb"] == "bm25":
            return timed_search(self.knowledge, lambda: bm25_search(self.knowledge, query, cfg["top_k"]))
        return timed_search(
            self.knowledge, lambda: dense_search(self.knowledge, query, cfg["top_k"], cfg["model"], cfg.get("api_base"))
        )


class GrepMixin:
    knowledge: KnowledgeBase
    search_config: dict[str, Any]

    @tool(ToolType.READ)
    def grep(self, pattern: str) -> str:
        """Search for a regex pattern in all knowledge base documents.

        Returns documents ranked by number of matches, with full content.

        Args:
            pattern: The regex pattern to search for (e.g., 'credit.*card', 'fee|charge')

        Returns:
            Matching documents ranked by relevance (match count)
        """
        hits = grep_search(self.knowledge, pattern, self.search_config.get("grep_top_k", 10))
        return format_hits(self.knowledge, hits) if hits else f"No matches found for pattern: {pattern}"


class KnowledgeToolsWithKBSearch(KBSearchMixin, KnowledgeTools):
    pass


class KnowledgeToolsWithGrep(GrepMixin, KnowledgeTools):
    pass


class KnowledgeToolsWithKBSearchAndGrep(KBSearchMixin, GrepMixin, KnowledgeTools):
    pass


# --- variants ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Variant:
    name: str
    template: str
    prompt: str = "standard"  # standard | full_kb | golden
    kb: str | None = None  # None | bm25 | embedding
    model: str | None = None  # embedding model (litellm name)
    grep: bool = False
    unsupported: str | None = None  # why this variant cannot be built here
    top_k: int = 10

    @property
    def task_specific(self) -> bool:
        return self.prompt == "golden"

    @property
    def offline(self) -> bool:
        return self.kb != "embedding" and self.unsupported is None

    def toolkit(self, store: Any, kb: KnowledgeBase) -> KnowledgeTools:
        if self.unsupported:
            raise ValueError(f"retrieval variant '{self.name}' is not available: {self.unsupported}")
        cls = {
            (False, False): KnowledgeTools,
            (True, False): KnowledgeToolsWithKBSearch,
            (False, True): KnowledgeToolsWithGrep,
            (True, True): KnowledgeToolsWithKBSearchAndGrep,
        }[(self.kb is not None, self.grep)]
        kit = cls(store)
        kit.knowledge = kb
        kit.search_config = {
            "kb": self.kb,
            "top_k": self.top_k,
            "model": self.model,
            "grep_top_k": 10,
            "api_base": _embedding_api_base(),
        }
        return kit

    def policy(self, data_dir: Path, kb: KnowledgeBase, task: Any) -> str:
        from tau_tui.domains import DomainError

        prompts = data_dir / "prompts"
        path = prompts / self.template
        if not path.is_file():
            raise DomainError(f"{path}: missing prompt template")

        def component(match: re.Match[str]) -> str:
            piece = prompts / "components" / f"{match.group(1)}.md"
            if not piece.is_file():
                raise DomainError(f"{piece}: missing prompt component")
            return piece.read_text(encoding="utf-8")

        text = _COMPONENT.sub(component, path.read_text(encoding="utf-8"))
        if self.prompt == "full_kb" and _FULL_KB.search(text):
            whole = kb.as_markdown()
            text = _FULL_KB.sub(lambda _m: whole, text)
        if self.prompt == "golden":
            wanted = list(
                getattr(task, "required_documents", None) or (task.model_extra or {}).get("required_documents", [])
                if task is not None
                else []
            )
            by_title = {d.title: d for d in kb.documents.values()}
            docs = [d for d in (by_title.get(r) or kb.documents.get(r) for r in wanted) if d is not None]
            text = text.replace("{{required_documents}}", kb.as_markdown(docs) if docs else "(No documents provided)")
        if not text.strip():
            raise DomainError(f"policy is empty for retrieval variant '{self.name}'")
        return text


def _embedding_api_base() -> str | None:
    import os

    return os.environ.get("TAU_TUI_EMBEDDINGS_API_BASE") or None


_SANDBOX = "it needs tau2's shell sandbox (srt/rg/bwrap), which tau-tui does not provide"
_RERANK = "tau2's pointwise LLM reranker is not implemented in tau-tui"
OPENAI = "openai/text-embedding-3-large"
QWEN = "openrouter/qwen/qwen3-embedding-8b"

VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in (
        Variant("no_knowledge", "no_knowledge.md"),
        Variant("full_kb", "full_kb.md", prompt="full_kb"),
        Variant("golden_retrieval", "required_docs.md", prompt="golden"),
        Variant("bm25_grep", "classic_rag_bm25.md", kb="bm25", grep=True),
        Variant("bm25", "classic_rag_bm25_no_grep.md", kb="bm25"),
        Variant("grep_only", "grep_only.md", grep=True),
        Variant("openai_embeddings_grep", "classic_rag_openai.md", kb="embedding", model=OPENAI, grep=True),
        Variant("openai_embeddings", "classic_rag_openai_no_grep.md", kb="embedding", model=OPENAI),
        Variant("qwen_embeddings_grep", "classic_rag_qwen.md", kb="embedding", model=QWEN, grep=True),
        Variant("qwen_embeddings", "classic_rag_qwen_no_grep.md", kb="embedding", model=QWEN),
        Variant("bm25_reranker_grep", "classic_rag_bm25.md", kb="bm25", grep=True, unsupported=_RERANK),
        Variant("bm25_reranker", "classic_rag_bm25_no_grep.md", kb="bm25", unsupported=_RERANK),
        Variant(
            "openai_embeddings_reranker_grep",
            "classic_rag_openai.md",
            kb="embedding",
            model=OPENAI,
            grep=True,
            unsupported=_RERANK,
        ),
        Variant(
            "openai_embeddings_reranker",
            "classic_rag_openai_no_grep.md",
            kb="embedding",
            model=OPENAI,
            unsupported=_RERANK,
        ),
        Variant(
            "qwen_embeddings_reranker_grep",
            "classic_rag_qwen.md",
            kb="embedding",
            model=QWEN,
            grep=True,
            unsupported=_RERANK,
        ),
        Variant(
            "qwen_embeddings_reranker", "classic_rag_qwen_no_grep.md", kb="embedding", model=QWEN, unsupported=_RERANK
        ),
        Variant("terminal_use", "agentic_search.md", unsupported=_SANDBOX),
        Variant("terminal_use_write", "agentic_search_write.md", unsupported=_SANDBOX),
        Variant("alltools", "all_tools.md", unsupported=_SANDBOX),
        Variant("alltools-qwen", "all_tools.md", unsupported=_SANDBOX),
    )
}
ALIASES = {"AllTools": "alltools"}


def resolve_variant(name: str) -> Variant:
    canonical = ALIASES.get(name, name)
    if canonical not in VARIANTS:
        raise ValueError(f"Unknown retrieval variant: {name!r}. Available: {sorted(VARIANTS)}")
    return VARIANTS[canonical]


def variant_names(offline_only: bool = False) -> list[str]:
    return [name for name, v in VARIANTS.items() if not offline_only or v.offline]


__all__ = ["DEFAULT_VARIANT", "VARIANTS", "KnowledgeBase", "Variant", "resolve_variant", "variant_names"]
