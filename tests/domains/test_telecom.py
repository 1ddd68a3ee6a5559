"""The telecom domain: pristine state, device tool texts, agent/user sync, isolation, tool table, oracle."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pytest

from tau_tui.model.messages import ToolCall, ToolMessage
from tau_tui.model.tasks import EnvFunctionCall
from tests.evaluate.test_oracle_agreement import FIELDS, agreement
from tests.helpers import criteria_of

if TYPE_CHECKING:
    from tau_tui.analysis import Analyzer
    from tau_tui.domains import DomainRegistry
    from tau_tui.env.domain import Domain
    from tau_tui.env.environment import Environment
    from tau_tui.env.tools import Toolkit

pytestmark = pytest.mark.corpus

PRISTINE_AGENT = "304cf5ef059852e117ea801ab9a5efc24c9713ec887679dc2e30acceb4b6742d"
PRISTINE_USER = "e1f3a8637388808221228ff3f87294444e6b64caf721f5eb243a85d0a9380b28"
TASK_0 = "[mobile_data_issue]user_abroad_roaming_enabled_off[PERSONA:None]"
PHONE = "555-123-2002"  # line L1002 of customer C1001 (Premium Plan, 15 GB)


@pytest.fixture(scope="module")
def telecom(registry: DomainRegistry) -> Domain:
    return registry.get("telecom")


@pytest.fixture
def env(telecom: Domain) -> Environment:
    return telecom.new_environment()


def user(env: Environment, tool_name: str, /, **arguments: Any) -> ToolMessage:
    return env.call(ToolCall(id="u", name=tool_name, arguments=arguments, requestor="user"))


def agent(env: Environment, tool_name: str, /, **arguments: Any) -> ToolMessage:
    return env.call(ToolCall(id="a", name=tool_name, arguments=arguments, requestor="assistant"))


def init(env: Environment, env_type: str, func_name: str, **arguments: Any) -> Any:
    return env.run_env_function(EnvFunctionCall(env_type=env_type, func_name=func_name, arguments=arguments))


def line(env: Environment, line_id: str) -> Mapping[str, Any]:
    assert env.agent is not None and env.agent.db is not None
    return next(item for item in env.agent.db.lines if item["line_id"] == line_id)


def bill(env: Environment, bill_id: str) -> Mapping[str, Any]:
    assert env.agent is not None and env.agent.db is not None
    return next(item for item in env.agent.db.bills if item["bill_id"] == bill_id)


# --- pristine state -----------------------------------------------------------------
def test_pristine_hashes_are_tau2s(env: Environment) -> None:
    assert env.db_hash() == PRISTINE_AGENT
    assert env.user_db_hash() == PRISTINE_USER


def test_policy_variants(telecom: Domain) -> None:
    manual = telecom.new_environment()
    workflow = telecom.new_environment(variant="workflow")
    solo = telecom.new_environment(solo=True, variant="workflow")
    assert manual.domain_name == "telecom" and workflow.domain_name == "telecom-workflow"
    main = telecom.read_text("main_policy.md")
    assert manual.policy == (
        f"<main_policy>\n{main}\n</main_policy>\n<tech_support_policy>\n"
        f"{telecom.read_text('tech_support_manual.md')}\n</tech_support_policy>"
    )
    assert workflow.policy.endswith(f"{telecom.read_text('tech_support_workflow.md')}\n</tech_support_policy>")
    assert solo.policy.startswith(f"<main_policy>\n{telecom.read_text('main_policy_solo.md')}\n</main_policy>")
    assert solo.policy.endswith(f"{telecom.read_text('tech_support_workflow_solo.md')}\n</tech_support_policy>")
    # The manual has no solo edition: tau2 reuses it.
    assert telecom.policy(solo=True).endswith(f"{telecom.read_text('tech_support_manual.md')}\n</tech_support_policy>")


# --- device tools: exact texts ----------------------------------------------------------
def test_task_0_roaming_fix_gives_an_excellent_speed_test(telecom: Domain, env: Environment) -> None:
    task = telecom.tasks()[TASK_0]
    assert task.initial_state is not None and task.initial_state.initialization_actions is not None
    for action in task.initial_state.initialization_actions:
        env.run_env_function(action)
    bar = "Status Bar: 📶⁴ Excellent | 5G | 📱 Data Enabled | 🔋 80%"
    assert user(env, "check_status_bar").text == bar
    assert user(env, "run_speed_test").text == "Speed test failed: No Connection."
    assert user(env, "toggle_roaming").text == f"Data Roaming is now ON.\n{bar}"
    result = user(env, "run_speed_test")
    assert not result.error
    assert result.text == "Speed Test Result: 275.00 Mbps (Excellent). Connection is very fast."
    assertions = criteria_of(task).env_assertions
    assert assertions is not None
    for assertion in assertions:
        assert env.run_assertion(assertion)


def test_airplane_mode_texts_and_network_status(env: Environment) -> None:
    on = user(env, "toggle_airplane_mode")
    assert on.text == "Airplane Mode is now ON.\nStatus Bar: ✈️ Airplane Mode | 🔋 80%"
    assert user(env, "check_network_status").text == "\n".join(
        [
            "Airplane Mode: ON",
            "SIM Card Status: active",
            "Cellular Connection: no_service",
            "Cellular Signal: none",
            "Cellular Network Type: none",
            "Mobile Data Enabled: Yes",
            "Data Roaming Enabled: No",
            "Wi-Fi Radio: OFF",
            "Wi-Fi Connected: No",
        ]
    )
    assert user(env, "toggle_wifi").text.startswith("Cannot change Wi-Fi settings while Airplane Mode is ON.\n")
    assert user(env, "toggle_airplane_mode").text == (
        "Airplane Mode is now OFF.\nStatus Bar: 📶⁴ Excellent | 5G | 📱 Data Enabled | 🔋 80%"
    )


def test_network_mode_and_data_saver_change_the_speed(env: Environment) -> None:
    assert user(env, "set_network_mode_preference", mode="3g_only").text == (
        "Preferred Network Mode set to: 3g_only\nStatus Bar: 📶² Fair | 3G | 📱 Data Enabled | 🔋 80%"
    )
    assert user(env, "run_speed_test").text == (
        "Speed Test Result: 1.50 Mbps (Poor). Connection is slow. Web browsing may be sluggish, streaming difficult."
    )
    assert user(env, "set_network_mode_preference", mode="5g").text.startswith(
        "Failed to set network mode: '5g' is not a valid option. "
        "Please use one of: 4g_5g_preferred, 4g_only, 3g_only, 2g_only\nStatus Bar: "
    )
    user(env, "set_network_mode_preference", mode="4g_only")
    assert user(env, "toggle_data_saver_mode").text.endswith("4G | 📱 Data Enabled | 🔽 Data Saver | 🔋 80%")
    assert user(env, "run_speed_test").text.startswith("Speed Test Result: 8.80 Mbps (Fair).")


def test_apn_reset_applies_at_reboot_and_mms(env: Environment) -> None:
    init(env, "user", "break_apn_mms_setting")
    assert user(env, "can_send_mms").text == "Your messaging app cannot send MMS messages."
    assert user(env, "check_apn_settings").text.startswith(
        "Current APN Name: internet\nMMSC URL (for picture messages): Not Set\n"
    )
    assert user(env, "reset_apn_settings").text.startswith("APN settings will reset at reboot.\nStatus Bar: ")
    assert user(env, "can_send_mms").text == "Your messaging app cannot send MMS messages."
    assert user(env, "reboot_device").text.startswith("Resetting APN settings...\nRestarting network services...\n")
    assert user(env, "can_send_mms").text == "Your messaging app can send MMS messages."


def test_app_permissions(env: Environment) -> None:
    init(env, "user", "remove_app_permission", app_name="messaging", permission="sms")
    assert user(env, "check_app_permissions", app_name="messaging").text == (
        "App 'messaging' has permission for: storage, phone."
    )
    assert user(env, "grant_app_permission", app_name="messaging", permission="camera").text.startswith(
        "Error. Permission 'camera' not tracked for app 'messaging', "
        "available permissions: ['sms', 'storage', 'phone', 'network']\n"
    )
    assert user(env, "grant_app_permission", app_name="messaging", permission="SMS").text.startswith(
        "Success. Permission 'sms' granted to app 'messaging'.\nStatus Bar: "
    )


def test_broken_vpn_slows_data_until_disconnected(env: Environment) -> None:
    init(env, "user", "break_vpn")
    assert user(env, "check_vpn_status").text == (
        "VPN is ON and connected. Details: {'server_address': '192.168.1.1', 'protocol': 'OpenVPN', "
        "'server_performance': <PerformanceLevel.POOR: 'poor'>}"
    )
    # 5G with a good signal: 275 Mbps * 0.8, cut to a tenth by the poor VPN server.
    assert user(env, "run_speed_test").text.startswith("Speed Test Result: 22.00 Mbps (Fair).")
    assert user(env, "disconnect_vpn").text.startswith("VPN disconnected successfully.\nStatus Bar: ")
    assert user(env, "run_speed_test").text.startswith("Speed Test Result: 220.00 Mbps (Excellent).")


def test_wrong_arguments_give_pythons_type_error_with_the_class_name(env: Environment) -> None:
    result = user(env, "toggle_roaming", name="x")
    assert result.error
    assert result.text == "Error: TelecomUserTools.toggle_roaming() got an unexpected keyword argument 'name'"
    assert agent(env, "get_details_by_id", id="X1").text == "Error: Unknown ID format or type: X1"


# --- agent tools ---------------------------------------------------------------------------
def test_refuel_data_charges_the_draft_bill(env: Environment) -> None:
    result = agent(env, "refuel_data", customer_id="C1001", line_id="L1002", gb_amount=2)
    assert result.text == (
        '{"message": "Successfully added 2 GB of data for line L1002 for $4.00", '
        '"new_data_refueling_gb": "2.0", "charge": "4.0"}'
    )
    draft = bill(env, "B1003")
    assert draft["line_items"][-1]["description"] == "Data refueling: 2 GB at $2.0/GB"
    assert agent(env, "refuel_data", customer_id="C1001", line_id="L1002", gb_amount=0).text == (
        "Error: Refuel amount must be positive"
    )
    assert agent(env, "refuel_data", customer_id="C1002", line_id="L1002", gb_amount=1).text == (
        "Error: Line L1002 not found for customer C1002"
    )


def test_suspend_line_returns_the_line_model(env: Environment) -> None:
    result = agent(env, "suspend_line", customer_id="C1001", line_id="L1002", reason="travel")
    assert '"message": "Line suspended successfully. $5/month holding fee will apply."' in result.text
    assert '"status": "Suspended"' in result.text and '"suspension_start_date": "2025-02-25"' in result.text
    assert '"data_used_gb": ' in result.text and '"data_used_gb": "' not in result.text  # model numbers stay numbers
    assert agent(env, "suspend_line", customer_id="C1001", line_id="L1002", reason="x").text == (
        "Error: Line must be active to suspend"
    )


# --- sync ------------------------------------------------------------------------------------
def test_sync_does_nothing_before_the_phone_number_is_known(env: Environment) -> None:
    agent(env, "suspend_line", customer_id="C1001", line_id="L1002", reason="test")
    assert env.user_db_hash() == PRISTINE_USER


def test_sync_copies_line_status_roaming_and_quota(env: Environment) -> None:
    init(env, "user", "set_user_info", name="John Smith", phone_number=PHONE)
    assert env.user is not None
    assert env.user.db is not None
    around = env.user.db.surroundings
    flags = (around["line_active"], around["roaming_allowed"], around["mobile_data_usage_exceeded"])
    assert flags == (True, True, False)

    agent(env, "disable_roaming", customer_id="C1001", line_id="L1002")
    assert env.user.db.surroundings["roaming_allowed"] is False
    agent(env, "enable_roaming", customer_id="C1001", line_id="L1002")
    assert env.user.db.surroundings["roaming_allowed"] is True

    agent(env, "suspend_line", customer_id="C1001", line_id="L1002", reason="test")
    assert env.user.db.surroundings["line_active"] is False
    user(env, "reboot_device")
    assert env.user.db.device["network_connection_status"] == "no_service"
    agent(env, "resume_line", customer_id="C1001", line_id="L1002")
    assert env.user.db.surroundings["line_active"] is True

    init(env, "assistant", "set_data_usage", customer_id="C1001", line_id="L1002", data_used_gb=15.0)
    assert env.user.db.surroundings["mobile_data_usage_exceeded"] is True
    assert init(env, "user", "assert_mobile_data_usage_exceeded", expected_status=True) is True
    agent(env, "refuel_data", customer_id="C1001", line_id="L1002", gb_amount=1.0)
    assert env.user.db.surroundings["mobile_data_usage_exceeded"] is False


def test_sync_turns_payment_requests_into_paid_bills(env: Environment) -> None:
    init(env, "user", "set_user_info", name="John Smith", phone_number=PHONE)
    assert user(env, "check_payment_request").text == "No payment request has been made."
    assert user(env, "make_payment").text == "You do not have a payment request."
    assert agent(env, "send_payment_request", customer_id="C1001", bill_id="B1002").text == (
        "Payment request sent to the customer for bill B1002"
    )
    assert env.user is not None
    assert env.user.db is not None
    assert env.user.db.surroundings["payment_request"] == {"bill_id": "B1002", "amount_due": 150.0, "paid": False}
    assert user(env, "check_payment_request").text == "You have a payment request for bill B1002 of 150.0 USD."
    assert user(env, "make_payment").text == "Payment of 150.0 USD has been made for bill B1002."
    assert bill(env, "B1002")["status"] == "Paid"
    assert env.user.db.surroundings["payment_request"] is None


def test_gold_path_tool_calls_do_not_sync(env: Environment) -> None:
    init(env, "user", "set_user_info", name="John Smith", phone_number=PHONE)
    env.make_tool_call("disable_roaming", "assistant", {"customer_id": "C1001", "line_id": "L1002"})
    assert env.user is not None
    assert env.user.db is not None
    assert env.user.db.surroundings["roaming_allowed"] is True
    env.sync()
    assert env.user.db.surroundings["roaming_allowed"] is False


def test_sync_without_changes_writes_nothing(env: Environment) -> None:
    init(env, "user", "set_user_info", name="John Smith", phone_number=PHONE)
    before = env.freeze()
    env.sync()
    after = env.freeze()
    assert after.user is before.user and after.agent is before.agent


# --- isolation ----------------------------------------------------------------------------------
def test_writes_never_reach_the_shared_pristine_trees(telecom: Domain) -> None:
    first = telecom.new_environment()
    task = telecom.tasks()[TASK_0]
    assert task.initial_state is not None and task.initial_state.initialization_actions is not None
    for action in task.initial_state.initialization_actions:
        first.run_env_function(action)
    user(first, "toggle_roaming")
    user(first, "toggle_airplane_mode")
    user(first, "grant_app_permission", app_name="browser", permission="sms")
    init(first, "user", "break_vpn")
    init(
        first,
        "assistant",
        "suspend_line_for_overdue_bill",
        customer_id="C1001",
        line_id="L1001",
        new_bill_id="B9999",
        contract_ended=True,
    )
    agent(first, "refuel_data", customer_id="C1001", line_id="L1002", gb_amount=3.0)
    agent(first, "send_payment_request", customer_id="C1001", bill_id="B9999")
    user(first, "make_payment")
    assert first.db_hash() != PRISTINE_AGENT and first.user_db_hash() != PRISTINE_USER

    second = telecom.new_environment()
    assert second.db_hash() == PRISTINE_AGENT
    assert second.user_db_hash() == PRISTINE_USER
    assert second.user is not None
    assert second.user.db is not None
    assert second.user.db.device["app_statuses"]["browser"]["permissions"]["sms"] is False
    assert second.agent is not None
    assert second.agent.db is not None
    assert len(second.agent.db.bills) == 6


# --- the tool table -------------------------------------------------------------------------------
AGENT_TOOLS = {
    "disable_roaming": ("write", ["customer_id", "line_id"]),
    "enable_roaming": ("write", ["customer_id", "line_id"]),
    "get_bills_for_customer": ("read", ["customer_id", "limit=12"]),
    "get_customer_by_id": ("read", ["customer_id"]),
    "get_customer_by_name": ("read", ["full_name", "dob"]),
    "get_customer_by_phone": ("read", ["phone_number"]),
    "get_data_usage": ("read", ["customer_id", "line_id"]),
    "get_details_by_id": ("read", ["id"]),
    "refuel_data": ("write", ["customer_id", "line_id", "gb_amount"]),
    "resume_line": ("write", ["customer_id", "line_id"]),
    "send_payment_request": ("write", ["customer_id", "bill_id"]),
    "suspend_line": ("write", ["customer_id", "line_id", "reason"]),
    "transfer_to_human_agents": ("generic", ["summary"]),
}
USER_READ = [
    "can_send_mms",
    "check_apn_settings",
    "check_app_permissions",
    "check_app_status",
    "check_data_restriction_status",
    "check_installed_apps",
    "check_network_mode_preference",
    "check_network_status",
    "check_payment_request",
    "check_sim_status",
    "check_status_bar",
    "check_vpn_status",
    "check_wifi_calling_status",
    "check_wifi_status",
    "run_speed_test",
]
USER_WRITE = [
    "connect_vpn",
    "disconnect_vpn",
    "grant_app_permission",
    "make_payment",
    "reboot_device",
    "reseat_sim_card",
    "reset_apn_settings",
    "set_apn_settings",
    "set_network_mode_preference",
    "toggle_airplane_mode",
    "toggle_data",
    "toggle_data_saver_mode",
    "toggle_roaming",
    "toggle_wifi",
    "toggle_wifi_calling",
]
USER_PARAMS = {
    "check_app_permissions": ["app_name"],
    "check_app_status": ["app_name"],
    "grant_app_permission": ["app_name", "permission"],
    "set_apn_settings": ["apn_settings"],
    "set_network_mode_preference": ["mode"],
}
AGENT_HELPERS = [
    "get_available_plan_ids",
    "set_data_usage",
    "suspend_line_for_overdue_bill",
    "assert_data_refueling_amount",
    "assert_line_status",
    "assert_overdue_bill_exists",
    "assert_no_overdue_bill",
]
USER_HELPERS = [
    "set_user_info",
    "set_user_location",
    "turn_airplane_mode_on",
    "turn_airplane_mode_off",
    "unseat_sim_card",
    "lock_sim_card",
    "turn_data_on",
    "turn_data_off",
    "turn_roaming_on",
    "turn_roaming_off",
    "turn_data_saver_mode_on",
    "turn_data_saver_mode_off",
    "break_apn_settings",
    "break_apn_mms_setting",
    "set_wifi_calling",
    "break_vpn",
    "remove_app_permission",
    "simulate_network_search",
    "assert_airplane_mode_status",
    "assert_service_status",
    "assert_mobile_data_status",
    "assert_mobile_roaming_status",
    "assert_mobile_data_saver_mode_status",
    "assert_internet_speed",
    "assert_internet_not_excellent",
    "assert_can_send_mms",
    "assert_mobile_data_usage_exceeded",
]


def _params(kit: Toolkit | None, name: str) -> list[str]:
    assert kit is not None
    out = []
    for p in inspect.signature(kit.bound(name)).parameters.values():
        out.append(p.name if p.default is inspect.Parameter.empty else f"{p.name}={p.default}")
    return out


def test_tool_types_mutation_flags_and_parameters_match_tau2(env: Environment) -> None:
    assert type(env.agent).__name__ == "TelecomTools" and type(env.user).__name__ == "TelecomUserTools"
    assert env.agent is not None
    assert set(env.agent.declared_tools) == set(AGENT_TOOLS)
    for name, (kind, params) in AGENT_TOOLS.items():
        spec = env.agent.spec(name)
        assert (spec.type.value, spec.mutates_state) == (kind, kind == "write"), name
        assert _params(env.agent, name) == params, name
    assert env.user is not None
    assert set(env.user.declared_tools) == set(USER_READ) | set(USER_WRITE)
    for name in USER_READ + USER_WRITE:
        spec = env.user.spec(name)
        kind = "read" if name in USER_READ else "write"
        assert (spec.type.value, spec.mutates_state) == (kind, kind == "write"), name
        assert _params(env.user, name) == USER_PARAMS.get(name, []), name


def test_helpers_run_for_tasks_but_are_not_tools(env: Environment) -> None:
    assert env.agent is not None
    assert set(AGENT_HELPERS) <= env.agent.declared_helpers
    assert env.user is not None
    assert set(USER_HELPERS) <= env.user.declared_helpers
    assert not (set(AGENT_HELPERS) & set(env.agent.declared_tools))
    assert agent(env, "set_data_usage", customer_id="C1001", line_id="L1002", data_used_gb=1.0).text == (
        "Error: Tool 'set_data_usage' not found."
    )
    assert init(env, "assistant", "get_available_plan_ids") == ["P1001", "P1002", "P1003", "P1004", "P1005"]
    # A private lookup is not reachable by name.
    with pytest.raises(ValueError):
        init(env, "assistant", "_line_by_phone", phone_number=PHONE)


def test_every_tool_has_a_summary_and_documents_its_arguments(env: Environment) -> None:
    for kit in (env.agent, env.user):
        assert kit is not None
        for name in kit.declared_tools:
            doc = inspect.getdoc(kit.bound(name)) or ""
            assert doc.splitlines()[0].strip(), name
            for param in _params(kit, name):
                assert f"    {param.split('=')[0]}:" in doc, (name, param)


# --- oracle ---------------------------------------------------------------------------------------
def test_oracle_agreement_telecom(
    oracle_rows: list[dict[str, Any]], analyzer: Analyzer, capsys: pytest.CaptureFixture[str]
) -> None:
    agree, total, problems = agreement("telecom", oracle_rows, analyzer)
    with capsys.disabled():
        counts = ", ".join(f"{f} {n}/{total}" for f, n in agree.items())
        print(f"\n[oracle] telecom: {total} simulations; {counts}")
    assert total > 0
    assert set(agree) == set(FIELDS)
    assert not problems, "\n".join(problems[:20])
