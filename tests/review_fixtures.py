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
