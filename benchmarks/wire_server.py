"""A deterministic OpenAI-compatible chat server on 127.0.0.1: every answer is a function of the request body.

    with WireServer() as server:
        server.base_url        # http://127.0.0.1:<port>/v1
        server.drain()         # the logged requests since the last drain: [{"body": ..., "reply": ...}, ...]

or in a process of its own, ``python -m benchmarks.wire_server [--log FILE.jsonl]``: it prints its base URL.

Each POST to ``/v1/chat/completions`` (or ``/chat/completions``) is logged and answered from the sha256 of
the body's canonical JSON (sorted keys, no spaces), so two clients that send the same bytes of meaning get
the same reply, and a conversation goes on identically for as long as their requests stay equal. The seed
in the body is part of what is hashed: a different seed may give a different conversation.

Who is asking is read from the model name:

- ``…wire-user``: a user simulator. Its first turn states a request with a digest of the ``<scenario>`` of its
  system prompt and quotes ids, phone numbers and emails found there; later turns answer, sometimes call one
  of the offered user tools, and after a hash-chosen number of turns end with ``###STOP###``,
  ``###TRANSFER###`` or ``###OUT-OF-SCOPE###``.
- any other model whose system prompt asks for ``expectedOutcome`` results: an NL-assertion judge; it grades
  every listed outcome, met or not by the hash.
- anything else: an agent. It answers with text, or with one or two calls of the offered tools (arguments
  filled from each tool's JSON schema, strings taken from tokens seen in the messages so some calls succeed
  and others fail), now and then a tool that does not exist or a required argument left out. With
  ``tool_choice: "required"`` (tau2's solo agent) it only calls tools and, after a hash-chosen number of
  turns, calls ``done`` alone.

Tool-call arguments are sent compact (``{"a":1}``), not as ``json.dumps`` writes them, so a client that
echoes the provider's text instead of its own serialisation shows in the next request. Every reply carries
``usage`` (counts derived from the body's length).
"""

from __future__ import annotations

import ast
import asyncio
import hashlib
import json
import random
import re
import threading
from pathlib import Path
from typing import Any

USER_MODEL = "wire-user"  # a model name ending so is answered as a user simulator
AGENT_MODEL = "wire-agent"
STOP, TRANSFER, OUT_OF_SCOPE = "###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###"
MISSING_TOOL = "lookup_everything"  # the name of a tool no domain offers
SOLO_STOP_TOOL = "done"

# Values worth quoting: user / order / reservation / item ids, phone numbers, emails, dates.
TOKEN_PATTERNS = {
    "email": re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+\w"),
    "phone": re.compile(r"(?<![\w-])(?:\+1[ -]?)?\(?\d{3}\)?[ -]\d{3}-\d{4}(?![\w-])"),
    "date": re.compile(r"\b\d{4}-\d{2}-\d{2}\b"),
    "id": re.compile(
        r"#W\d{7}\b|\b[a-z]+(?:_[a-z]+)*_\d+\b|\b(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{5,8}\b|\b\d{10}\b"
        r"|\b[A-Z]{1,4}\d{3,6}\b"
    ),
    "name": re.compile(r"\b[A-Z][a-z]{2,11}\b"),
    "number": re.compile(r"(?<![\w.-])\d{1,5}(?:\.\d{1,2})?(?![\w.-])"),
}
ID_HINT = re.compile(r"(^|_)(id|ids|code|number|num|key)$|_id_|^id_")
FREE_TEXT = ("summary", "reason", "description", "content", "message", "note", "text", "query", "title")


def canonical(value: Any) -> str:
    """The JSON every comparison and hash uses: sorted keys, no spaces, non-ASCII kept."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


# banking_knowledge's search tools end each result with how long the search took, in milliseconds
# ("[Timing: retrieval=12ms, reranking=0ms, total=12ms]", in tau2 and in tau-tui alike): a wall-clock reading,
# never the same twice. Its numbers are read as "#", so the answer (and a comparison) depends on the rest.
TIMING = re.compile(r"\[Timing: retrieval=\d+ms(?:, reranking=\d+ms)?, total=\d+ms\]")


def timing_free(text: str) -> str:
    return TIMING.sub(lambda m: re.sub(r"=\d+ms", "=#ms", m.group(0)), text)


def without_times(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` with the times in its tool results read as "#" (``TIMING``)."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not any(
        isinstance(m, dict) and isinstance(m.get("content"), str) and "[Timing: " in m["content"] for m in messages
    ):
        return body
    out = [
        {**m, "content": timing_free(m["content"])} if isinstance(m, dict) and isinstance(m.get("content"), str) else m
        for m in messages
    ]
    return {**body, "messages": out}


def digest(body: dict[str, Any]) -> bytes:
    return hashlib.sha256(canonical(without_times(body)).encode()).digest()


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def tokens(text: str) -> dict[str, list[str]]:
    """The quotable values in ``text`` by kind, first occurrence first, each once."""
    found: dict[str, list[str]] = {}
    for kind, pattern in TOKEN_PATTERNS.items():
        seen: dict[str, None] = {}
        for match in pattern.finditer(text):
            seen.setdefault(match.group(0))
        found[kind] = list(seen)
    return found


def scenario_of(messages: list[dict[str, Any]]) -> str:
    system = next((_text(m.get("content")) for m in messages if m.get("role") == "system"), "")
    match = re.search(r"<scenario>(.*?)</scenario>", system, re.S)
    return (match.group(1) if match else system).strip()


class Context:
    """What one request offers to answer from: its tools and the tokens of its messages (recent ones first)."""

    def __init__(self, body: dict[str, Any], rng: random.Random):
        self.body = body
        self.rng = rng
        self.messages: list[dict[str, Any]] = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        self.tools = [t for t in body.get("tools") or [] if isinstance(t, dict) and isinstance(t.get("function"), dict)]
        recent = "\n".join(self._said(m) for m in self.messages if m.get("role") != "system")
        everything = "\n".join(self._said(m) for m in self.messages)
        self.recent = tokens(recent)
        self.every = tokens(everything)

    @staticmethod
    def _said(message: dict[str, Any]) -> str:
        parts = [_text(message.get("content"))]
        for call in message.get("tool_calls") or []:
            if isinstance(call, dict) and isinstance(call.get("function"), dict):
                parts.append(str(call["function"].get("arguments") or ""))
        return "\n".join(parts)

    def pick(self, kind: str) -> str | None:
        """A token of this kind, mostly from the conversation, sometimes from anywhere (the policy too)."""
        pools = [self.recent.get(kind) or [], self.every.get(kind) or []]
        pool = pools[0] if pools[0] and self.rng.random() < 0.85 else pools[1]
        return self.rng.choice(pool) if pool else None

    def turns(self, role: str) -> int:
        return sum(1 for m in self.messages if m.get("role") == role)

    def trailing_tool_turns(self) -> int:
        """How many of the last assistant turns in a row were tool calls."""
        count = 0
        for message in reversed(self.messages):
            if message.get("role") != "assistant":
                continue
            if not message.get("tool_calls"):
                break
            count += 1
        return count


def _resolve(schema: Any, defs: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(schema, dict):
        return {}
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return _resolve(defs.get(ref.rsplit("/", 1)[-1], {}), defs)
    for key in ("anyOf", "oneOf", "allOf"):
        options = [o for o in schema.get(key) or [] if isinstance(o, dict) and o.get("type") != "null"]
        if options:
            merged = {k: v for k, v in schema.items() if k != key}
            merged.update(_resolve(options[0], defs))
            return merged
    return schema


def value_for(name: str, schema: Any, defs: dict[str, Any], ctx: Context, depth: int = 0) -> Any:
    """A value for one argument, from its schema and the tokens seen so far."""
    schema = _resolve(schema, defs)
    rng = ctx.rng
    if "enum" in schema and schema["enum"]:
        return rng.choice(schema["enum"])
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "object" or (kind is None and "properties" in schema):
        return fill_object(schema, defs, ctx, depth + 1) if depth < 4 else {}
    if kind == "array":
        return [
            value_for(name.rstrip("s"), schema.get("items", {}), defs, ctx, depth + 1) for _ in range(rng.randint(1, 2))
        ]
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "integer":
        picked = ctx.pick("number")
        return int(float(picked)) if picked and rng.random() < 0.6 else rng.randint(0, 5)
    if kind == "number":
        picked = ctx.pick("number")
        return float(picked) if picked and rng.random() < 0.6 else round(rng.uniform(0, 500), 2)
    return string_for(name, ctx)


def string_for(name: str, ctx: Context) -> str:
    lowered = name.lower()
    rng = ctx.rng
    if any(word in lowered for word in FREE_TEXT):
        ask = ctx.pick("id") or "my account"
        return rng.choice([f"Customer asks about {ask}.", f"Follow-up on {ask} — café hours, naïve résumé ✓"])
    for kind, hints in (("email", ("email",)), ("phone", ("phone",)), ("date", ("date", "day"))):
        if any(h in lowered for h in hints):
            return ctx.pick(kind) or ctx.pick("id") or f"{kind}-{rng.randint(100, 999)}"
    if "name" in lowered:
        return ctx.pick("name") or ctx.pick("id") or "Alex"
    if ID_HINT.search(lowered) or rng.random() < 0.7:
        picked = ctx.pick("id")
        if picked and rng.random() < 0.9:
            return picked
    return ctx.pick("id") or ctx.pick("name") or f"x{rng.randint(1000, 9999)}"


def fill_object(schema: dict[str, Any], defs: dict[str, Any], ctx: Context, depth: int = 0) -> dict[str, Any]:
    properties = schema.get("properties") or {}
    required = [r for r in schema.get("required") or [] if r in properties]
    args: dict[str, Any] = {}
    for name, prop in properties.items():
        if name in required or ctx.rng.random() < 0.25:
            args[name] = value_for(name, prop, defs, ctx, depth)
    return args


def tool_call(ctx: Context, tool: dict[str, Any] | None, index: int, key: str) -> dict[str, Any]:
    """One call of ``tool`` (None: a tool that does not exist), with arguments from its schema."""
    if tool is None:
        name, args = MISSING_TOOL, {"anything": ctx.pick("id") or "x"}
    else:
        function = tool["function"]
        name = str(function.get("name"))
        params = function.get("parameters") or {}
        defs = {**(params.get("$defs") or {}), **(params.get("definitions") or {})}
        args = fill_object(params, defs, ctx)
        required = [r for r in params.get("required") or [] if r in args]
        if required and ctx.rng.random() < 0.08:
            args.pop(ctx.rng.choice(required))  # a call the environment refuses
    arguments = json.dumps(args, ensure_ascii=False, separators=(",", ":"))
    return {"id": f"call_{key}{index}", "type": "function", "function": {"name": name, "arguments": arguments}}


def _tool_turn(ctx: Context, key: str, candidates: list[dict[str, Any]], most: int) -> list[dict[str, Any]]:
    count = 1 if most == 1 or ctx.rng.random() < 0.7 else 2
    calls = []
    for index in range(count):
        tool = None if ctx.rng.random() < 0.05 else ctx.rng.choice(candidates)
        calls.append(tool_call(ctx, tool, index, key))
    return calls


def user_reply(ctx: Context, key: str) -> dict[str, Any]:
    rng = ctx.rng
    own_turns = ctx.turns("assistant")  # the user's own earlier turns (roles are flipped for the simulator)
    scenario = scenario_of(ctx.messages)
    if own_turns == 0:
        found = tokens(scenario)
        quoted = [*found["id"][:3], *found["phone"][:1], *found["email"][:1]]
        asked = re.split(r"(?i)instructions:", scenario, maxsplit=1)[-1]
        words = " ".join(re.sub(r"[#*<>\[\]]", " ", asked).split()[:14])
        tag = hashlib.sha256(scenario.encode()).hexdigest()[:8]
        said = f"Hello, I need help ({tag}): {words}."
        if quoted:
            said += " My details: " + ", ".join(quoted) + "."
        return {"role": "assistant", "content": said}
    if own_turns >= 9 or rng.random() < 0.2:
        ending = rng.choices([STOP, TRANSFER, OUT_OF_SCOPE], weights=[6, 2, 2])[0]
        return {"role": "assistant", "content": f"Thanks, that is all for now. {ending}"}
    if ctx.tools and ctx.trailing_tool_turns() < 2 and rng.random() < 0.35:
        calls = [tool_call(ctx, rng.choice(ctx.tools), 0, key)]
        return {"role": "assistant", "content": None, "tool_calls": calls}
    token = ctx.pick("id") or ctx.pick("phone") or "that"
    said = rng.choice(
        [
            f"Yes, please go ahead with {token}.",
            f"My id is {token}. Can you check it?",
            "I'm not sure what you mean. Could you explain?",
            f"No, I meant {token}, not the other one.",
            "Yes, I confirm.",
        ]
    )
    return {"role": "assistant", "content": said}


def agent_reply(ctx: Context, key: str) -> dict[str, Any]:
    rng = ctx.rng
    solo = ctx.body.get("tool_choice") == "required"
    names = [str(t["function"].get("name")) for t in ctx.tools]
    if solo and ctx.tools:
        if SOLO_STOP_TOOL in names and (ctx.turns("assistant") >= 8 or rng.random() < 0.18):
            stop = next(t for t in ctx.tools if t["function"].get("name") == SOLO_STOP_TOOL)
            return {"role": "assistant", "content": None, "tool_calls": [tool_call(ctx, stop, 0, key)]}
        work = [t for t in ctx.tools if t["function"].get("name") != SOLO_STOP_TOOL] or ctx.tools
        return {"role": "assistant", "content": None, "tool_calls": _tool_turn(ctx, key, work, 2)}
    last = ctx.messages[-1].get("role") if ctx.messages else None
    wants_text = rng.random() < (0.55 if last == "tool" else 0.35)
    if not ctx.tools or ctx.trailing_tool_turns() >= 3 or wants_text:
        token = ctx.pick("id") or "your request"
        said = rng.choice(
            [
                f"I have looked into {token}. Is there anything else?",
                f"Could you confirm {token} for me?",
                f"Done: {token} is updated. Anything else I can help with?",
                "I'm sorry, I cannot help with that. Shall I transfer you?",
            ]
        )
        return {"role": "assistant", "content": said}
    calls = _tool_turn(ctx, key, ctx.tools, 2)
    content = "Let me check that for you." if rng.random() < 0.05 else None  # text and calls at once, now and then
    return {"role": "assistant", "content": content, "tool_calls": calls}


def judge_reply(ctx: Context) -> dict[str, Any] | None:
    """An NL-assertion judge's verdicts (tau2's NLAssertionsEvaluator prompt), or None if this is no such request."""
    system = next((_text(m.get("content")) for m in ctx.messages if m.get("role") == "system"), "")
    if "expectedOutcome" not in system:
        return None
    prompt = next((_text(m.get("content")) for m in ctx.messages if m.get("role") == "user"), "")
    listed = prompt.rsplit("expectedOutcomes:", 1)[-1].strip()
    try:
        outcomes = [str(o) for o in ast.literal_eval(listed)]
    except (ValueError, SyntaxError):
        outcomes = [listed]
    results = [
        {"expectedOutcome": o, "reasoning": "graded by the wire server", "metExpectation": ctx.rng.random() < 0.6}
        for o in outcomes
    ]
    return {"role": "assistant", "content": json.dumps({"results": results})}


TOOL_TEXTS = frozenset({"description", "title", "enum"})


def without_tool_texts(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` with its tools' descriptions, titles and enums left out (what ``lenient`` answers from)."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in TOOL_TEXTS}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return {**body, "tools": strip(body["tools"])} if "tools" in body else body


def answer(body: dict[str, Any], lenient: bool = False) -> dict[str, Any]:
    """The whole chat-completion reply to ``body``: a pure function of its canonical JSON. ``lenient``
    answers from the body without its tools' texts (``without_tool_texts``), so two clients whose tool
    schemas differ only in wording hold the same conversation, and the differences behind it show too."""
    if lenient:
        body = without_tool_texts(body)
    hashed = digest(body)
    key = hashed.hex()[:12]
    ctx = Context(body, random.Random(int.from_bytes(hashed, "big")))
    model = str(body.get("model", ""))
    if model.endswith(USER_MODEL):
        message = user_reply(ctx, key)
    else:
        message = judge_reply(ctx) or agent_reply(ctx, key)
    if not message.get("tool_calls"):
        message.pop("tool_calls", None)
    prompt_tokens = len(canonical(without_times(body).get("messages"))) // 4 + len(canonical(body.get("tools"))) // 8
    completion_tokens = max(1, len(canonical(message)) // 4)
    return {
        "id": f"chatcmpl-{key}",
        "object": "chat.completion",
        "created": 1_700_000_000 + int.from_bytes(hashed[:2], "big"),
        "model": model,
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                "message": message,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


class WireServer:
    """The deterministic chat endpoint of the module docstring; logs every request body with its reply."""

    def __init__(self, log: Path | None = None, lenient: bool = False):
        self.log_path = log
        self.lenient = lenient
        self.log: list[dict[str, Any]] = []  # {"tag", "body", "reply"} in arrival order
        self._drained = 0
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop: asyncio.Event | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def url(self, tag: str) -> str:
        """A base URL whose requests are logged under ``tag`` (one per client run, so runs can overlap)."""
        return f"http://127.0.0.1:{self.port}/{tag}/v1"

    def drain(self) -> list[dict[str, Any]]:
        """The requests logged since the last drain."""
        with self._lock:
            taken = self.log[self._drained :]
            self._drained = len(self.log)
        return taken

    def tagged(self, tag: str) -> list[dict[str, Any]]:
        with self._lock:
            return [entry for entry in self.log if entry["tag"] == tag]

    async def _completion(self, request: Any) -> Any:
        from aiohttp import web

        raw = await request.read()
        try:
            body = json.loads(raw)
        except ValueError:
            return web.Response(status=400, text='{"error": {"message": "body is not JSON"}}')
        reply = answer(body, self.lenient)
        entry = {"tag": request.match_info.get("tag", ""), "body": body, "reply": reply}
        with self._lock:
            self.log.append(entry)
            if self.log_path is not None:
                with self.log_path.open("a", encoding="utf-8") as out:
                    out.write(canonical(entry) + "\n")
        return web.Response(text=json.dumps(reply), content_type="application/json")

    async def _serve(self) -> None:
        from aiohttp import web

        app = web.Application(client_max_size=256 * 1024**2)
        app.router.add_post("/v1/chat/completions", self._completion)
        app.router.add_post("/chat/completions", self._completion)
        app.router.add_post("/{tag}/v1/chat/completions", self._completion)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
        await site.start()
        server = getattr(site, "_server", None)
        self.port = server.sockets[0].getsockname()[1] if server is not None else 0
        self._stop = asyncio.Event()
        self._ready.set()
        await self._stop.wait()
        await runner.cleanup()

    def __enter__(self) -> WireServer:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_until_complete, args=(self._serve(),), daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the wire server did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._loop is not None and self._stop is not None and self._thread is not None
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)
        self._loop.close()


def main() -> int:
    import argparse

    parser = argparse.ArgumentParser(description="a deterministic chat-completions server (answers from a hash)")
    parser.add_argument("--log", type=Path, help="append every request and reply to this JSONL file")
    parser.add_argument("--lenient", action="store_true", help="answer as if tools had no descriptions")
    args = parser.parse_args()
    with WireServer(log=args.log, lenient=args.lenient) as server:
        print(server.base_url, flush=True)
        threading.Event().wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
