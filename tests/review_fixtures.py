"""Builders of tau2's newer recorded fields, shaped as tau2's own models write them (read from its source).

* ``reviewed_run``: a run folder as ``tau2 review`` leaves it: ``results.json`` (a corpus file as it is)
  and ``results_reviewed.json`` beside it, the same run with ``review`` (``Review``: summary, agent_error,
  user_error, critical_user_error, has_errors, errors[ReviewError: source, error_type, error_tags,
  severity, turn_idx, tick_start, tick_end, reasoning, correct_behavior], cost), ``user_only_review``
  (``UserOnlyReview``), ``auth_classification`` (``AuthenticationClassification``: status, reasoning, cost),
  ``hallucination_check`` (``HallucinationCheck``) and ``hallucination_retries_used`` on its simulations.
* ``full_duplex_run``: a small voice run in tau2's dir layout: ``mode: full_duplex``, no ``messages``,
  ``ticks`` (``Tick``: tick_id, timestamp, agent_chunk, user_chunk, *_tool_calls, *_tool_results,
  tick_duration_seconds), an ``effect_timeline`` (``EffectTimeline.events``: effect_type, start_ms, end_ms,
  participant, params) and a review whose errors name tick ranges.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from tests.conftest import CORPUS

RETAIL = CORPUS / "sierra-research__tau2-bench__gpt-4.1_retail_defautl_gpt-4.1_1trials.json"


def review_error(
    source: str, turn_idx: int | None, tags: list[str], severity: str | None, reasoning: str, **more: Any
) -> dict[str, Any]:
    return {
        "source": source,
        "error_type": "content_error",
        "error_tags": tags,
        "severity": severity,
        "turn_idx": turn_idx,
        "tick_start": None,
        "tick_end": None,
        "reasoning": reasoning,
        "correct_behavior": more.pop("correct_behavior", None),
        **more,
    }


def full_review(errors: list[dict[str, Any]], summary: str = "Reviewed.") -> dict[str, Any]:
    agent = any(e["source"] == "agent" for e in errors)
    user = any(e["source"] == "user" for e in errors)
    critical_user = any(e["source"] == "user" and str(e.get("severity")).startswith("critical_") for e in errors)
    return {
        "summary": summary,
        "agent_error": agent,
        "user_error": user,
        "critical_user_error": critical_user,
        "has_errors": bool(errors),
        "errors": errors,
        "cost": 0.0125,
    }


def reviewed_run(root: Path, source: Path = RETAIL, name: str = "gpt41_retail", keep: int | None = None) -> Path:
    """``<root>/<name>/`` with ``results.json`` and ``results_reviewed.json`` (the first ``keep`` simulations
    when given); returns the folder."""
    folder = root / name
    folder.mkdir(parents=True)
    data = json.loads(source.read_text())
    if keep is None:
        shutil.copyfile(source, folder / "results.json")
    else:
        data["simulations"] = data["simulations"][:keep]
        (folder / "results.json").write_text(json.dumps(data))
    sims = data["simulations"]
    sims[0]["review"] = full_review(
        [
            review_error(
                "agent",
                6,
                ["tool_call_argument_error"],
                "critical",
                "The agent looked up the user before confirming the order number.",
                correct_behavior="Ask for the order id first.",
            ),
            review_error(
                "user", 3, ["hallucination"], "critical_helped", "The user gave an email not in the scenario."
            ),
            review_error("unknown", None, ["other"], "minor", "The conversation ended abruptly."),
        ],
        summary="One agent and one user error.",
    )
    sims[0]["auth_classification"] = {"status": "succeeded", "reasoning": "Email matched.", "cost": 0.001}
    sims[1]["user_only_review"] = {
        "summary": "User drifted.",
        "user_error": True,
        "critical_user_error": False,
        "has_errors": True,
        "cost": 0.002,
        "errors": [
            {
                "turn_idx": 1,
                "error_type": "content_error",
                "error_tags": ["guideline_violation"],
                "severity": "minor",
                "reasoning": "Asked two things at once.",
                "user_message": None,
                "correct_behavior": None,
            }
        ],
    }
    sims[1]["auth_classification"] = {"status": "failed", "reasoning": "No identity check.", "cost": None}
    first_user = next(m["content"] for m in sims[2]["messages"] if m["role"] == "user")
    sims[2]["hallucination_check"] = {
        "reasoning": "Step by step…",
        "hallucination_found": True,
        "errors": [{"reasoning": "Invented a zip code.", "user_message": first_user[:40], "correct_behavior": None}],
        "summary": "One invented detail.",
        "cost": 0.003,
    }
    sims[2]["hallucination_retries_used"] = 1
    sims[3]["review"] = full_review([], summary="No errors.")
    sims[3]["auth_classification"] = {"status": "not_needed", "reasoning": ""}
    (folder / "results_reviewed.json").write_text(json.dumps(data))
    return folder


def _chunk(
    role: str, speech: bool, content: str | None = None, action: str | None = None, insert: str | None = None
) -> dict[str, Any]:
    chunk: dict[str, Any] = {
        "role": role,
        "content": content,
        "contains_speech": speech,
        "turn_taking_action": {"action": action} if action else None,
    }
    if insert:
        chunk["speech_effects"] = {
            "dynamic_muffling_enabled": False,
            "speech_insert": {"text": "[cough]", "type": insert},
        }
    return chunk


# who speaks in each tick: a = agent, u = user, b = both; the rest silence.
SPEECH = "aaaa..uuuuu..aaaabbbaa...uuuuubbbbbbbbbbbbbuu...aaa"
# (tick, side, tool name)
CALLS = ((16, "agent", "get_user_details"), (44, "agent", "get_order_details"))


def full_duplex_ticks() -> list[dict[str, Any]]:
    ticks = []
    for i, who in enumerate(SPEECH):
        agent = who in "ab"
        user = who in "ub"
        tick: dict[str, Any] = {
            "tick_id": i,
            "timestamp": f"2026-06-30T11:40:{i // 5:02d}.{(i % 5) * 200000:06d}",
            "agent_chunk": _chunk("assistant", agent, "words " if agent else None),
            "user_chunk": _chunk(
                "user",
                user,
                "talk " if user else None,
                action="keep_talking" if user else "wait",
                insert="vocal_tic" if i == 37 else None,
            ),
            "tick_duration_seconds": 0.2,
        }
        if i == 17:  # the user starts a backchannel while the agent talks
            tick["user_chunk"]["turn_taking_action"] = {"action": "backchannel"}
        ticks.append(tick)
    for at, side, name in CALLS:
        call_id = f"call_{at}"
        ticks[at][f"{side}_tool_calls"] = [
            {"id": call_id, "name": name, "arguments": {"user_id": "u1"}, "requestor": "assistant"}
        ]
        ticks[at][f"{side}_tool_results"] = [
            {"id": call_id, "role": "tool", "content": "{}", "requestor": "assistant", "error": False}
        ]
    return ticks


def full_duplex_run(root: Path) -> Path:
    """A voice run folder in tau2's dir layout with one full-duplex simulation; returns the folder."""
    folder = root / "voice_retail"
    (folder / "simulations").mkdir(parents=True)
    data = json.loads(RETAIL.read_text())
    sim_id = "fd-sim-1"
    sim = {
        "id": sim_id,
        "task_id": data["simulations"][0]["task_id"],
        "trial": 0,
        "seed": 1,
        "start_time": "2026-06-30T11:40:00",
        "end_time": "2026-06-30T11:40:11",
        "duration": 10.2,
        "termination_reason": "user_stop",
        "mode": "full_duplex",
        "messages": None,
        "ticks": full_duplex_ticks(),
        "effect_timeline": {
            "events": [
                {
                    "effect_type": "burst_noise",
                    "start_ms": 1200,
                    "end_ms": 1600,
                    "participant": "user",
                    "params": {"file": "car_horn.wav", "snr_db": 5.0},
                },
                {
                    "effect_type": "frame_drop",
                    "start_ms": 8000,
                    "end_ms": None,
                    "participant": "agent",
                    "params": {"duration_ms": 60},
                },
            ]
        },
        "review": full_review(
            [
                {
                    "source": "agent",
                    "error_type": "interruption_error",
                    "error_tags": ["interruption_error"],
                    "severity": "minor",
                    "turn_idx": None,
                    "tick_start": 30,
                    "tick_end": 38,
                    "reasoning": "The agent kept talking over the user.",
                    "correct_behavior": "Yield.",
                }
            ]
        ),
    }
    meta = {
        "timestamp": data["timestamp"],
        "info": {
            **data["info"],
            "audio_native_config": {"provider": "openai", "model": "gpt-realtime", "tick_duration_seconds": 0.2},
        },
        "tasks": data["tasks"],
        "simulation_index": [{"id": sim_id, "task_id": sim["task_id"]}],
    }
    (folder / "results.json").write_text(json.dumps(meta))
    (folder / "simulations" / f"{sim_id}.json").write_text(json.dumps(sim))
    return folder


# --- a full-duplex mock run with ticks and the consolidated messages list beside them ---------------------

VOICE_TASK: dict[str, Any] = {
    "id": "voice_update_and_dismiss",
    "description": {"purpose": "A voice run: the agent completes task_1, the user dismisses its notification"},
    "user_scenario": {"instructions": "Check your notifications, ask to complete task_1, then dismiss notif_1."},
    "initial_state": {
        "initialization_actions": [
            {
                "env_type": "user",
                "func_name": "add_notification",
                "arguments": {
                    "notification_id": "notif_1",
                    "message": "Task 'Test task' has been assigned to you.",
                    "task_id": "task_1",
                },
            }
        ]
    },
    "evaluation_criteria": {
        "actions": [
            {
                "action_id": "update_1",
                "name": "update_task_status",
                "arguments": {"task_id": "task_1", "status": "completed"},
            },
            {
                "action_id": "dismiss_1",
                "requestor": "user",
                "name": "dismiss_notification",
                "arguments": {"notification_id": "notif_1"},
            },
        ],
        "env_assertions": [
            {
                "env_type": "user",
                "func_name": "assert_notification_status",
                "arguments": {"notification_id": "notif_1", "expected_status": "read"},
                "assert_value": True,
            }
        ],
        "communicate_info": ["task_1 is now completed"],
        "reward_basis": ["DB", "ACTION", "ENV_ASSERTION", "COMMUNICATE"],
    },
}
TICK_SECONDS = 0.2
# (first tick, side, chunk texts, utterance id): what each side says, one chunk per tick
VOICE_SPEECH = (
    (0, "agent", ["Hi! ", "How can I ", "help you ", "today?"], "a0"),
    (7, "user", ["I finished task_1, ", "please mark ", "it completed."], "u1"),
    (16, "agent", ["Done, task_1 ", "is now, ", "completed. ", "Anything else?"], "a1"),
    (18, "user", ["mm-hmm"], "u2"),  # a backchannel inside the agent's turn
    (27, "user", ["No, thanks! ", "###STOP###"], "u3"),
)
NOTIFICATIONS = (
    '[{"notification_id": "notif_1", "message": "Task \'Test task\' has been assigned to you.", '
    '"status": "unread", "task_id": "task_1"}]'
)
# (tick, side, call id, tool, arguments, tau2's output)
VOICE_CALLS: tuple[tuple[int, str, str, str, dict[str, str], str], ...] = (
    (5, "user", "call_u1", "check_notifications", {}, NOTIFICATIONS),
    (
        14,
        "agent",
        "call_a1",
        "update_task_status",
        {"task_id": "task_1", "status": "completed"},
        '{"task_id": "task_1", "title": "Test task", "description": "A test task", "status": "completed"}',
    ),
    (24, "user", "call_u2", "dismiss_notification", {"notification_id": "notif_1"}, "Notification notif_1 dismissed"),
)
VOICE_TICKS = 30


def _stamp(seconds: float) -> str:
    whole = int(seconds)
    return f"2026-07-20T10:00:{whole:02d}.{round((seconds - whole) * 1e6):06d}"


def _voice_chunk(role: str, at: float, text: str | None, utterance: str | None, chunk_id: int | None) -> dict[str, Any]:
    """A tick's chunk as tau2's ``AssistantMessage``/``UserMessage.voice`` dumps it (audio left out)."""
    return {
        "role": role,
        "content": text,
        "tool_calls": None,
        "is_audio": False,
        "turn_idx": None,
        "timestamp": _stamp(at),
        "cost": 0.0 if role == "user" and text else None,
        "usage": None,
        "raw_data": None,
        "generation_time_seconds": None,
        "audio_format": None,
        "audio_path": None,
        "audio_script_gold": None,
        "speech_effects": None,
        "source_effects": None,
        "channel_effects": None,
        "turn_taking_action": None,
        "utterance_ids": [utterance] if utterance else None,
        "chunk_id": chunk_id,
        "is_final_chunk": True,
        "source": None,
        "contains_speech": text is not None,
    }


def voice_ticks(skip_calls: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """The ticks of the voice run, as tau2's ``Tick`` dumps them; ``skip_calls``: call ids left out.

    Each chunk is stamped at the end of its tick and each tool result when it ran, earlier in the tick, as
    a live API reports them.
    """
    said: dict[tuple[int, str], tuple[str, str, int]] = {}
    for start, side, parts, utterance_id in VOICE_SPEECH:
        for k, part in enumerate(parts):
            said[(start + k, side)] = (part, utterance_id, k)
    ticks = []
    for i in range(VOICE_TICKS):
        begin = i * TICK_SECONDS
        tick: dict[str, Any] = {"tick_id": i, "timestamp": _stamp(begin)}
        for side, role, late in (("agent", "assistant", 0.15), ("user", "user", 0.16)):
            text: str | None
            utterance: str | None
            n: int | None
            text, utterance, n = said.get((i, side), (None, None, None))
            tick[f"{side}_chunk"] = _voice_chunk(role, begin + late, text, utterance, n)
            tick[f"{side}_tool_calls"] = []
            tick[f"{side}_tool_results"] = []
        tick.update(user_transcript=None, tick_duration_seconds=TICK_SECONDS, wall_clock_duration_seconds=0.21)
        ticks.append(tick)
    for at, side, call_id, name, arguments, output in VOICE_CALLS:
        if call_id in skip_calls:
            continue
        requestor = "assistant" if side == "agent" else "user"
        tick = ticks[at]
        tick[f"{side}_tool_calls"] = [{"id": call_id, "name": name, "arguments": arguments, "requestor": requestor}]
        tick[f"{side}_tool_results"] = [
            {
                "id": call_id,
                "role": "tool",
                "content": output,
                "requestor": requestor,
                "error": False,
                "turn_idx": None,
                "timestamp": _stamp(at * TICK_SECONDS + 0.05),
            }
        ]
    return ticks


def consolidated_messages(ticks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The flat list tau2's ``SimulationRun.get_messages`` derives from ticks (``Tick.get_all_messages``,
    sorted by timestamp, renumbered): a tool result, stamped before the chunk whose message carries its
    call, lands before that message."""
    out = []
    for tick in ticks:
        for side in ("agent", "user"):
            chunk, calls = tick[f"{side}_chunk"], tick[f"{side}_tool_calls"]
            if chunk or calls:
                out.append({**chunk, "tool_calls": calls or None})
            out.extend(tick[f"{side}_tool_results"])
    out.sort(key=lambda m: m["timestamp"])
    return [{**m, "turn_idx": i} for i, m in enumerate(out)]


VOICE_USAGE = {
    "records": [
        {
            "provider": "gemini",
            "model": "gemini-live-2.5-flash-preview",
            "component": "realtime",
            "semantics": "delta",
            "scope_id": None,
            "tick_number": None,
            "billable": True,
            "input_tokens": 5230,
            "output_tokens": 812,
            "input_text_tokens": 1200,
            "input_audio_tokens": 4030,
            "input_cached_tokens": 0,
            "input_cached_text_tokens": None,
            "input_cached_audio_tokens": None,
            "output_text_tokens": 112,
            "output_audio_tokens": 700,
            "audio_input_seconds": None,
            "characters": None,
            "raw": None,
        },
        {
            "provider": "deepgram",
            "model": "nova-3",
            "component": "stt",
            "semantics": "delta",
            "scope_id": None,
            "tick_number": None,
            "billable": True,
            "input_tokens": None,
            "output_tokens": None,
            "input_text_tokens": None,
            "input_audio_tokens": None,
            "input_cached_tokens": None,
            "input_cached_text_tokens": None,
            "input_cached_audio_tokens": None,
            "output_text_tokens": None,
            "output_audio_tokens": None,
            "audio_input_seconds": 5.8,
            "characters": None,
            "raw": None,
        },
    ],
    "cost": None,
    "cost_breakdown": None,
    "pricing_version": None,
    "num_raw_records": 9,
}


def voice_simulation(ticks: list[dict[str, Any]] | None = None, **fields: Any) -> dict[str, Any]:
    """One full-duplex simulation as tau2 saves it, with the consolidated ``messages`` beside its ``ticks``."""
    ticks = voice_ticks() if ticks is None else ticks
    sim: dict[str, Any] = {
        "id": "voice-sim-1",
        "task_id": VOICE_TASK["id"],
        "timestamp": "2026-07-20T10:00:07",
        "start_time": "2026-07-20T10:00:00",
        "end_time": "2026-07-20T10:00:06",
        "duration": 6.3,
        "termination_reason": "user_stop",
        "agent_cost": None,  # a voice agent nobody priced (tau2 PR 454): not 0
        "user_cost": 0.0012,
        "agent_usage": VOICE_USAGE,
        "reward_info": {
            "reward": 1.0,
            "db_check": {"db_match": True, "db_reward": 1.0},
            "reward_basis": VOICE_TASK["evaluation_criteria"]["reward_basis"],
        },
        "user_info": None,
        "messages": consolidated_messages(ticks),
        "ticks": ticks,
        "trial": 0,
        "seed": 300,
        "mode": "full_duplex",
        "speech_environment": None,
        "review": None,
        "user_only_review": None,
        "info": None,
        "auth_classification": None,
        "hallucination_retries_used": 0,
        "hallucination_check": None,
        "provider_session_id": None,
        "policy": None,
        "effect_timeline": None,
    }
    sim.update(fields)
    return sim


def voice_mock_run(root: Path, sims: list[dict[str, Any]] | None = None, name: str = "voice_mock") -> Path:
    """A voice run folder in tau2's dir layout (``results.json`` + ``simulations/``); returns the folder."""
    folder = root / name
    (folder / "simulations").mkdir(parents=True)
    sims = [voice_simulation()] if sims is None else sims
    meta = {
        "timestamp": "2026-07-20T10:00:00",
        "info": {
            "git_commit": "unknown",
            "num_trials": 1,
            "max_steps": 200,
            "max_errors": 10,
            "seed": 300,
            "user_info": {"implementation": "voice_streaming_user_simulator", "llm": "gpt-4.1", "llm_args": {}},
            "agent_info": {"implementation": "audio_native_agent", "llm": "gemini-live-2.5-flash", "llm_args": {}},
            "environment_info": {"domain_name": "mock", "policy": "…", "tool_defs": None},
            "audio_native_config": {"provider": "gemini", "model": "gemini-live-2.5-flash-preview"},
        },
        "tasks": [VOICE_TASK],
        "simulation_index": [{"id": s["id"], "task_id": s["task_id"], "trial": s.get("trial", 0)} for s in sims],
    }
    (folder / "results.json").write_text(json.dumps(meta))
    for sim in sims:
        (folder / "simulations" / f"{sim['id']}.json").write_text(json.dumps(sim))
    return folder
