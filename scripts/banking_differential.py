"""Differential fuzz of banking_knowledge: tau2's own toolkits against ours, call by call.

    python scripts/banking_differential.py TAU2_SRC [SEED] [STEPS] [EPISODES]

TAU2_SRC is the ``src`` folder of a tau2-bench checkout (1.0.1; e.g.
``git archive HEAD src/tau2 | tar -x``): its banking toolkits import under
Python 3.11. Each episode builds tau2's ``KnowledgeTools``/``KnowledgeUserTools``
on one ``TransactionalDB`` and our environment on the same data, then makes the
same random calls on both (base tools, unlocks, wrapper calls with random and
broken arguments, gives, user calls) and compares every result text, every
exception and the DB hash after every call. It prints the first mismatches,
then how often each tool succeeded / failed on tau2's side (coverage).
"""

import inspect
import json
import logging
import random
import re
import sys
from pathlib import Path

if len(sys.argv) < 2:
    raise SystemExit(__doc__)
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, sys.argv.pop(1))
sys.path.insert(0, str(ROOT))
logging.disable(logging.WARNING)
from tau2.domains.banking_knowledge.data_model import TransactionalDB
from tau2.domains.banking_knowledge.tools import KnowledgeTools as T2Agent
from tau2.domains.banking_knowledge.tools import KnowledgeUserTools as T2User
from tau2.utils.utils import get_dict_hash

from tau_tui.domains import DomainRegistry
from tests.conftest import CORPUS

DATA = CORPUS / "domains" / "banking_knowledge"
raw = json.loads((DATA / "db.json").read_text())
dom = DomainRegistry(CORPUS).get("banking_knowledge")
rng = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 300


def pools(db):
    d = lambda t: list(db[t]["data"])
    return {
        "user_id": d("users") + ["nope", ""],
        "card_id": d("debit_cards") + ["dbc_nope"],
        "account_id": d("accounts") + ["acc_nope"],
        "checking_account_id": d("accounts"),
        "source_account_id": d("accounts"),
        "destination_account_id": d("accounts"),
        "credit_card_account_id": d("credit_card_accounts") + ["cc_nope"],
        "transaction_id": d("credit_card_transaction_history")[:30]
        + d("bank_account_transaction_history")[:60]
        + ["btxn_834027370c20", "txn_x"],
    }


def enum_values(doc, name):
    m = re.search(rf"{name} \([^)]*\): .*?Must be one of: (.*)", doc or "")
    vals = re.findall(r"'([^']+)'", m.group(1)) if m else []
    m2 = re.search(rf"{name} \([^)]*\): .*?:\s*([A-Z_]+(?:, [A-Z_]+)*,? or [A-Z_]+)", doc or "")
    if m2:
        vals += re.findall(r"[A-Z_]{3,}", m2.group(1))
    m3 = re.search(rf"{name} \([^)]*\): Reason for closing: (.*)", doc or "")
    if m3:
        vals += [v.strip(" or") for v in m3.group(1).replace(" or ", ", ").split(", ")]
    return vals


def value(name, ann, doc, P):
    if name in P and rng.random() < 0.9:
        return rng.choice(P[name])
    ev = enum_values(doc, name)
    if ev and rng.random() < 0.85:
        return rng.choice(ev)
    if name in ("pin", "new_pin", "current_pin"):
        return rng.choice(["1234", "1111", "8264", "5093", "12a4", "9876", "4821", ""])
    if name in ("cvv",):
        return rng.choice(["123", "12", "abc", "739"])
    if name in ("last_4_digits", "card_last_4_digits"):
        return rng.choice(["1234", "0000", "12", "4821"])
    if "date" in name or name == "time_verified":
        return rng.choice(["11/14/2025", "2025-11-14 03:40:00 EST", "01/01/2020", "bad"])
    a = str(ann)
    if "bool" in a:
        return rng.choice([True, False, None])
    if (
        "int" in a
        or "float" in a
        or "amount" in name
        or "limit" in name
        or "apy" in name
        or "fee" in name
        or name == "months"
    ):
        return rng.choice([0, 1, 25, 100, 2500, 2500.0, 99.99, -5, 1e6, 500, 750, 1500.5, "12", None])
    return rng.choice(
        ["x", "Gold Rewards Card", "other", "", "EcoCard", "lost", "atm", "purchase", "checking", "savings"]
    )


def gen_args(method, P, drop=0.05, extra=0.03):
    sig = inspect.signature(method)
    doc = inspect.getdoc(method)
    args = {}
    for n, p in sig.parameters.items():
        if n == "self":
            continue
        if p.default is not inspect.Parameter.empty and rng.random() < 0.4:
            continue
        if rng.random() < drop:
            continue
        args[n] = value(n, p.annotation, doc, P)
    if rng.random() < extra:
        args["bogus"] = 1
    return args


def run(seed_steps):
    t2db = TransactionalDB.model_validate(raw)
    a2, u2 = T2Agent(t2db), T2User(t2db)
    env = dom.new_environment(variant="no_knowledge")
    allow = set(rng.sample([n for n in a2.get_discoverable_tools()], 5))
    a2.set_read_log_allowlist(allow)
    env.agent.set_read_log_allowlist(allow)
    agent_base = [n for n in a2.tools if not a2.is_discoverable(n)]
    user_base = [n for n in u2.tools if not u2.is_discoverable(n)]
    adisc = list(a2.get_discoverable_tools())
    udisc = list(u2.get_discoverable_tools())
    mism = 0
    for i in range(seed_steps):
        P = pools(env.agent.db.root)
        r = rng.random()
        if r < 0.45:
            tool = rng.choice(adisc)
            target = a2.get_discoverable_tools()[tool]
            if rng.random() < 0.85:
                calls = [("assistant", "unlock_discoverable_agent_tool", {"agent_tool_name": tool})]
            else:
                calls = []
            args = gen_args(target, P)
            text = json.dumps(args)
            if rng.random() < 0.3:
                text = re.sub(r"(\d+)\.0\b", r"\1", text)
            if rng.random() < 0.02:
                text = "{bad json"
            calls.append(("assistant", "call_discoverable_agent_tool", {"agent_tool_name": tool, "arguments": text}))
        elif r < 0.6:
            tool = rng.choice(udisc + ["nope"])
            calls = []
            if tool != "nope" and rng.random() < 0.8:
                calls.append(
                    ("assistant", "give_discoverable_user_tool", {"discoverable_tool_name": tool, "arguments": "{}"})
                )
            target = u2.get_discoverable_tools().get(tool)
            args = gen_args(target, P) if target else {}
            calls.append(
                ("user", "call_discoverable_user_tool", {"discoverable_tool_name": tool, "arguments": json.dumps(args)})
            )
        elif r < 0.85:
            tool = rng.choice(agent_base)
            calls = [("assistant", tool, gen_args(getattr(a2, tool), P))]
        else:
            tool = rng.choice(user_base)
            calls = [("user", tool, gen_args(getattr(u2, tool), P))]
        for req, name, args in calls:
            kit = a2 if req == "assistant" else u2
            try:
                theirs = ("ok", kit.use_tool(name, **args))
            except Exception as e:
                theirs = ("err", f"{type(e).__name__}: {e}")
            try:
                ours = ("ok", env.make_tool_call(name, req, dict(args)))
            except Exception as e:
                ours = ("err", f"{type(e).__name__}: {e}")
            tgt = args.get("agent_tool_name") or args.get("discoverable_tool_name") or name
            okres = theirs[0] == "ok" and isinstance(theirs[1], str) and not theirs[1].startswith("Error")
            COV.setdefault(tgt, [0, 0])[0 if okres else 1] += 1
            h2 = get_dict_hash(t2db.model_dump())
            h1 = env.db_hash()
            if theirs != ours or h1 != h2:
                mism += 1
                if mism <= 5:
                    print("MISMATCH", i, req, name, json.dumps(args)[:300])
                    print("  tau2:", repr(theirs)[:600])
                    print("  ours:", repr(ours)[:600])
                    print("  hash", h1 == h2)
                # resync ours to theirs to continue
                return mism, i
    return mism, seed_steps


COV = {}
total = 0
for s in range(int(sys.argv[3]) if len(sys.argv) > 3 else 5):
    m, n = run(steps)
    total += m
    print("episode", s, "mismatches", m, "steps", n)
print("TOTAL", total)
print(sorted(COV.items(), key=lambda kv: kv[1][0]))
