"""An OpenAI-compatible chat server on 127.0.0.1 that answers every completion after a fixed delay.

    with LatencyServer(delay=1.0, reply="...") as server:
        server.base_url   # http://127.0.0.1:<port>/v1
        server.peak       # most requests in flight at once so far

or in a process of its own, ``python -m benchmarks.latency_server [--delay S]``: it prints its base URL,
and ``GET /stats`` (``?reset=1`` to start counting again) answers the counts as JSON.

It runs an asyncio loop (aiohttp) in a thread of its own, so any number of
requests wait their delay at once: the server is never the limit being
measured. It counts the requests in flight, so a test can check how many
calls a client really makes at once without timing anything.

A request for a model named ``…latency-user`` is answered as a user simulator would: a first request,
then tau2's stop token once the agent has answered, so a runner with an LLM user (tau2's own included)
makes three calls per simulation: user, agent, user.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any

USER_MODEL = "latency-user"  # the model name a user simulator calls this server by
USER_FIRST = "Hi, I would like some help with my account, please."
USER_STOP = "###STOP###"


class LatencyServer:
    """A chat-completions endpoint whose every answer takes ``delay`` seconds (see the module docstring)."""

    def __init__(self, delay: float = 1.0, reply: str = "Done. Is there anything else I can help you with?"):
        self.delay = delay
        self.reply = reply
        self.in_flight = 0
        self.peak = 0
        self.requests = 0
        self.first_request = self.last_answer = 0.0  # perf_counter() readings of this process
        self.arrivals: list[float] = []  # perf_counter() of every request received, in order
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop: asyncio.Event | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def reset(self) -> None:
        """Forget the counts (between measured runs)."""
        self.peak = self.requests = 0
        self.first_request = self.last_answer = 0.0
        self.arrivals = []

    async def _completion(self, request: Any) -> Any:
        from aiohttp import web

        body = await request.json()
        if not self.requests:
            self.first_request = time.perf_counter()
        self.requests += 1
        self.arrivals.append(time.perf_counter())
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            await asyncio.sleep(self.delay)
        finally:
            self.in_flight -= 1
            self.last_answer = time.perf_counter()
        payload = {
            "id": f"cmpl-{self.requests}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model"),
            "choices": [
                {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": self.answer(body)}}
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }
        return web.Response(text=json.dumps(payload), content_type="application/json")

    def answer(self, body: dict[str, Any]) -> str:
        """The reply to one request: ``reply`` for an agent; for a user simulator (a model named
        ``*latency-user``), a first request, then tau2's stop token once the agent has answered it."""
        if not str(body.get("model", "")).endswith(USER_MODEL):
            return self.reply
        messages = body.get("messages") or []
        said = any(isinstance(m, dict) and m.get("role") == "assistant" for m in messages)  # the user's own turns
        return USER_STOP if said else USER_FIRST

    async def _stats(self, request: Any) -> Any:
        from aiohttp import web

        counts = {"requests": self.requests, "peak": self.peak, "span": self.last_answer - self.first_request}
        if request.query.get("reset"):
            self.reset()
        return web.Response(text=json.dumps(counts), content_type="application/json")

    async def _serve(self) -> None:
        from aiohttp import web

        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._completion)
        app.router.add_post("/chat/completions", self._completion)
        app.router.add_get("/stats", self._stats)
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

    def __enter__(self) -> LatencyServer:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_until_complete, args=(self._serve(),), daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the latency server did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._loop is not None and self._stop is not None and self._thread is not None
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)
        self._loop.close()


def main() -> int:
    import argparse

    parser = argparse.ArgumentParser(description="a chat-completions server with a fixed answer delay")
    parser.add_argument("--delay", type=float, default=1.0)
    args = parser.parse_args()
    with LatencyServer(delay=args.delay) as server:
        print(server.base_url, flush=True)
        threading.Event().wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
