"""The model client: every call to a model (the agent, the user simulator, the judge) goes through here.

- ``client``: ``complete`` (our messages) / ``complete_chat`` (chat-completions messages) / ``complete_sync``
  (off the event loop), the one retry loop, ``LLMSettings`` and ``RetryPolicy``;
- ``failures``: our failure kinds, one table to the error names recordings hold, and what callers get;
- ``litellm_transport`` (the only module that imports litellm) and ``http_transport`` (OpenAI-compatible
  endpoints over aiohttp): two ``transport.Transport`` objects, each closing what it opened;
- ``spend``: token usage and cost, once for both transports; ``credentials``: missing and refused keys;
- ``chat``: messages to and from the chat-completions shape; ``json_tools``: the JSON tool protocol for
  models without native tool calls.

Nothing here imports litellm at import time (it costs seconds).
"""
