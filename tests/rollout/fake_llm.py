"""A local OpenAI-compatible chat-completions server for tests (127.0.0.1 only, real HTTP).

Replies are scripted per model name: each request to ``/v1/chat/completions``
for model M takes the next reply of M's script (a ``Reply``, or a callable
``request -> Reply``). Every request is recorded with its headers and body, so
tests can check exactly what a participant sent.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, cast


@dataclass
class Reply:
    status: int = 200
    content: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    error: str | None = None
    delay: float = 0.0
    usage: tuple[int, int] = (10, 5)
    choices: list[dict[str, Any]] | None = None  # sent as is instead of one choice built from content/tool_calls
    model: str | None = None  # the model the reply names (default: the one asked for)
    body: bytes | None = None  # sent as is instead of any JSON reply (with ``status``)


def text(content: str, delay: float = 0.0) -> Reply:
    return Reply(content=content, delay=delay)


def call(name: str, arguments: Any, call_id: str = "call_1") -> Reply:
    """A reply with one tool call; ``arguments`` is sent as given when it is a string (malformed JSON)."""
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return Reply(tool_calls=[{"id": call_id, "type": "function", "function": {"name": name, "arguments": raw}}])


def calls(*items: tuple[str, Any, str]) -> Reply:
    return Reply(
        tool_calls=[
            {
                "id": i,
                "type": "function",
                "function": {"name": n, "arguments": a if isinstance(a, str) else json.dumps(a)},
            }
            for n, a, i in items
        ]
    )


def no_choices(choices: list[dict[str, Any]] | None = None) -> Reply:
    """A 200 reply with an empty ``choices`` list (or the given malformed choices)."""
    return Reply(choices=choices or [])


def error(status: int, message: str) -> Reply:
    return Reply(status=status, error=message)


@dataclass
class Request:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def model(self) -> str:
        return cast(str, self.body.get("model", ""))

    @property
    def messages(self) -> list[dict[str, Any]]:
        return cast("list[dict[str, Any]]", self.body.get("messages", []))

    def dump(self) -> str:
        return json.dumps(self.body)


@dataclass
class FakeLLM:
    """The server; ``script(model, replies)`` sets what each model answers, in order."""

    scripts: dict[str, list[Reply | Callable[[Request], Reply]]] = field(default_factory=dict)
    fallback: dict[str, Reply | Callable[[Request], Reply]] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                request = Request(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                reply = fake._next(request)
                if reply.delay:
                    time.sleep(reply.delay)
                status, payload = fake._payload(request, reply)
                data = reply.body if reply.body is not None else json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client went away (a test killed it)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}/v1"

    def args(self, **extra: Any) -> dict[str, Any]:
        """litellm arguments pointing at this server."""
        return {"api_base": self.base_url, "api_key": "sk-test-not-a-real-key-000000", "temperature": 0.0, **extra}

    def script(
        self,
        model: str,
        replies: list[Reply | Callable[[Request], Reply]],
        then: Reply | Callable[[Request], Reply] | None = None,
    ) -> None:
        with self._lock:
            self.scripts[model] = list(replies)
            if then is not None:
                self.fallback[model] = then

    def requests_for(self, model: str) -> list[Request]:
        return [r for r in self.requests if r.model == model]

    def _next(self, request: Request) -> Reply:
        with self._lock:
            self.requests.append(request)
            queue = self.scripts.get(request.model, [])
            item = queue.pop(0) if queue else self.fallback.get(request.model)
        if item is None:
            return error(500, f"no scripted reply left for model {request.model!r}")
        return item(request) if callable(item) else item

    @staticmethod
    def _payload(request: Request, reply: Reply) -> tuple[int, dict[str, Any]]:
        if reply.status != 200:
            kind = "rate_limit_error" if reply.status == 429 else "invalid_request_error"
            return reply.status, {"error": {"message": reply.error or "error", "type": kind, "code": str(reply.status)}}
        prompt, completion = reply.usage
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = reply.tool_calls
        choices = (
            reply.choices
            if reply.choices is not None
            else [{"index": 0, "message": message, "finish_reason": "tool_calls" if reply.tool_calls else "stop"}]
        )
        return 200, {
            "id": f"chatcmpl-{len(request.body)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": reply.model or request.model,
            "choices": choices,
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
        }

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
