"""Data models for tau2 recordings and the readers/writers of every layout."""

from tau_tui.model import inspect_log as _inspect_log  # noqa: F401 - registers the reader of Inspect .eval logs
from tau_tui.model.io import RunFile, RunFileError, SimEntry, expand_paths, open_run, save_results, write_atomic
from tau_tui.model.messages import (
    AssistantMessage,
    Message,
    OtherMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
    parse_message,
)
from tau_tui.model.results import Results, RewardInfo, RunInfo, SimulationRun
from tau_tui.model.tasks import Action, EnvAssertion, EnvFunctionCall, Task

__all__ = [
    "Action",
    "AssistantMessage",
    "EnvAssertion",
    "EnvFunctionCall",
    "Message",
    "OtherMessage",
    "Results",
    "RewardInfo",
    "RunFile",
    "RunFileError",
    "RunInfo",
    "SimEntry",
    "SimulationRun",
    "SystemMessage",
    "Task",
    "ToolCall",
    "ToolMessage",
    "UserMessage",
    "expand_paths",
    "open_run",
    "parse_message",
    "save_results",
    "write_atomic",
]
