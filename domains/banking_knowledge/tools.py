"""The bank agent's tools (tau2 ``KnowledgeTools``): look-ups, verification, and the discoverable tools.

The agent's toolkit has a few base tools and 44 discoverable ones. A
discoverable tool is reached only through two wrappers:
``unlock_discoverable_agent_tool`` (remembered by this toolkit instance, that
is by the episode; nothing goes to the DB) and ``call_discoverable_agent_tool``
(parses the arguments with every JSON integer turned into a float, runs the
tool, and logs ``{tool_name, status: CALLED}`` in ``agent_discoverable_tools``
when the tool writes or is on the task's read-log allowlist). The agent also
hands user tools over with ``give_discoverable_user_tool`` (logged in
``user_discoverable_tools``). Outputs and errors are tau2's, word for word:
strict replay compares them.

The class keeps tau2's name because Python's own argument errors name it
(``KnowledgeTools.x() missing 1 required positional argument``) and those
texts are in recordings.
"""

from __future__ import annotations

import inspect
import json
from datetime import datetime
from typing import Any, Literal

from tau_tui.env import Toolkit, ToolType, tool

from . import records as R
from .discoverable import tool_info, unlock_text
from .records import TODAY, Tables

TRANSFER_REASONS = (
    "fraud_or_security_concern",
    "account_closure_request",
    "deceased_account_holder",
    "legal_or_regulatory_matter",
    "account_ownership_dispute",
    "complex_billing_dispute",
    "abusive_customer_behavior",
    "third_party_inquiry",
    "technical_system_error",
    "unconfirmed_external_communication",
    "customer_demands_after_unavailable_offer_refusal",
    "kb_search_unsuccessful_customer_requests_transfer",
    "specialized_department_required",
    "accessibility_or_special_needs",
    "customer_frustrated_demands_human",
    "supervisor_request_service_complaint",
    "customer_requests_human_no_specific_reason",
    "request_completed_customer_wants_human_followup",
    "other",
)

TransferReason = Literal[TRANSFER_REASONS]  # the tool schema lists them as an enum, as tau2's does

SEQUENTIAL_PINS = (
    "0123",
    "1234",
    "2345",
    "3456",
    "4567",
    "5678",
    "6789",
    "9876",
    "8765",
    "7654",
    "6543",
    "5432",
    "4321",
    "3210",
)

# Which activation tool fits a card's issue_reason.
ACTIVATION_TOOL = {
    "new_account": "activate_debit_card_8291",
    "first_card": "activate_debit_card_8291",
    "lost": "activate_debit_card_8292",
    "stolen": "activate_debit_card_8292",
    "fraud": "activate_debit_card_8292",
    "expired": "activate_debit_card_8293",
    "damaged": "activate_debit_card_8293",
    "upgrade": "activate_debit_card_8293",
    "bank_reissue": "activate_debit_card_8293",
}

# Early-closure fee and window (days) by account level.
CHECKING_EARLY_CLOSURE = {
    "Light Blue Account": (15, 30),
    "Light Green Account": (15, 30),
    "Green Fee-Free Account": (15, 30),
    "Blue Account": (25, 60),
    "Green Account": (25, 60),
    "Evergreen Account": (50, 90),
    "Bluest Account": (100, 180),
}
SAVINGS_EARLY_CLOSURE = {
    "Bronze Account": (20, 60),
    "Silver Account": (35, 90),
    "Silver Plus Account": (35, 90),
    "Gold Account": (75, 180),
    "Gold Plus Account": (75, 180),
    "Gold Years Account": (75, 180),
    "Platinum Account": (150, 270),
    "Platinum Plus Account": (150, 270),
    "Diamond Elite Account": (150, 270),
}

DEFAULT_ATM_LIMITS = {
    "blue account": 500,
    "green account": 600,
    "light blue account": 400,
    "green fee-free account": 500,
    "evergreen account": 750,
    "bluest account": 1500,
    "dark green account": 300,
    "gold years account": 600,
    "purple account": 1000,
}


def pin_problem(pin: Any) -> str | None:
    """Why a PIN is not acceptable, or None."""
    if not pin or not pin.isdigit() or len(pin) != 4:
        return "PIN must be exactly 4 digits."
    if pin in SEQUENTIAL_PINS:
        return "PIN cannot be sequential (e.g., 1234). Please choose a more secure PIN."
    if len(set(pin)) == 1:
        return "PIN cannot be all the same digit (e.g., 1111). Please choose a more secure PIN."
    return None


def _days_since(text: Any) -> int:
    """Days from an MM/DD/YYYY date to the bank's now (0 when unreadable)."""
    try:
        return (R.NOW - datetime.strptime(text, "%m/%d/%Y")).days
    except ValueError:
        return 0


def _lines(*parts: str) -> str:
    return "\n".join(parts)


def _args_block(**arguments: Any) -> str:
    return json.dumps(arguments, indent=2)


class KnowledgeTools(Tables, Toolkit):
    """The Rho-Bank agent's toolkit."""

    reveals_by_reading = False  # discoverable tools are unlocked by a tool, not by reading about them

    def __init__(self, db):
        super().__init__(db)
        self.unlocked: dict[str, dict[str, Any]] = {}  # this episode's unlocked agent tools
        self.given: dict[str, dict[str, Any]] = {}  # user tools this episode gave, with suggested arguments
        self.read_log_allowlist: set[str] = set()
        self.user_kit: Any = None  # the user's toolkit (for give_discoverable_user_tool)

    def set_read_log_allowlist(self, names: Any) -> None:
        self.read_log_allowlist = set(names or [])

    # --- how the workbench shows unlocks, gives and wrapper calls (tau_tui.env.tools hooks) ---------------
    def unlocks(self, name: str, arguments: Any, content: str, error: bool) -> list[tuple[str, str, str]]:
        target = (
            arguments.get("agent_tool_name" if name == "unlock_discoverable_agent_tool" else "discoverable_tool_name")
            if isinstance(arguments, dict)
            else None
        )
        if error or not isinstance(target, str):
            return []
        from .user_tools import KnowledgeUserTools

        # only names of declared discoverable tools: a recording's text never becomes a shown tool name
        if (
            name == "unlock_discoverable_agent_tool"
            and target in self.discoverable()
            and content.startswith(f"Tool unlocked: {target}\n")
        ):
            return [("assistant", target, "unlock")]
        given = KnowledgeUserTools.declared_tools.get(target)
        if (
            name == "give_discoverable_user_tool"
            and given is not None
            and given.discoverable
            and content.startswith(f"Tool given to user: {target}\n")
        ):
            return [("user", target, "give")]
        return []

    def wrapped_tool(self, name: str, arguments: Any) -> str | None:
        target = arguments.get("agent_tool_name") if isinstance(arguments, dict) else None
        spec = (
            self.declared_tools.get(target)
            if name == "call_discoverable_agent_tool" and isinstance(target, str)
            else None
        )
        return target if spec is not None and spec.discoverable else None

    def discoverable(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name, spec in self.declared_tools.items() if spec.discoverable}

    # --- base tools -------------------------------------------------------------------------
    @tool(ToolType.GENERIC)
    def transfer_to_human_agents(self, summary: str, reason: TransferReason = "other") -> str:
        """Transfer the user to a human agent.

        The proper transfer reason enum can be found in the knowledge base: search it before calling this tool to select the proper applicable reason.

        Args:
            summary: A summary of the user's issue and what was attempted before transfer.
            reason: The specific reason code for the transfer.
        """
        if reason not in TRANSFER_REASONS:
            return f"Error: Invalid transfer reason '{reason}'. Must be one of: {', '.join(TRANSFER_REASONS)}"
        return f"Transfer successful (reason: {reason}). A human agent will assist you shortly."

    @tool(ToolType.READ)
    def get_current_time(self) -> str:
        """Get the current time. Use this to get the current timestamp for logging verification records.

        Returns:
            The current time in the format "YYYY-MM-DD HH:MM:SS TZ"
        """
        return f"The current time is {R.CURRENT_TIME}."

    @tool(ToolType.READ)
    def get_user_information_by_id(self, user_id: str) -> str:
        """Get the information (date of birth, email, phone number, address) for a user by their user id.

        Args:
            user_id: The ID of the user
        """
        return self.lookup("users", "user_id", user_id)

    @tool(ToolType.READ)
    def get_user_information_by_name(self, customer_name: str) -> str:
        """Get the information (date of birth, email, phone number, address) for a user by their name. Case Sensitive.

        Args:
            customer_name: The name of the user
        """
        return self.lookup("users", "name", customer_name)

    @tool(ToolType.READ)
    def get_user_information_by_email(self, email: str) -> str:
        """Get the information (date of birth, email, phone number, address) for a user by their email.

        Args:
            email: The email of the user
        """
        return self.lookup("users", "email", email)

    @tool(ToolType.WRITE)
    def change_user_email(self, user_id: str, new_email: str) -> str:
        """Change the email address for a user.

        Args:
            user_id: The ID of the user whose email should be changed
            new_email: The new email address to set for the user
        """
        if not self.update("users", user_id, email=new_email):
            return f"Error: User with ID '{user_id}' not found."
        return f"Email updated successfully.\n  - User ID: {user_id}\n  - New Email: {new_email}"

    @tool(ToolType.READ)
    def get_referrals_by_user(self, user_id: str) -> str:
        """Get all referrals made by a user.

        Args:
            user_id: The ID of the user (referrer) to look up referrals for
        """
        return self.lookup("referrals", "referrer_id", user_id)

    @tool(ToolType.READ)
    def get_credit_card_transactions_by_user(self, user_id: str) -> str:
        """Get all credit card transactions for a user.

        Args:
            user_id: The ID of the user to look up transactions for
        """
        return self.lookup("credit_card_transaction_history", "user_id", user_id)

    @tool(ToolType.READ)
    def get_credit_card_accounts_by_user(self, user_id: str) -> str:
        """Get all credit card accounts for a user.

        Returns information about each credit card account including card type,
        date opened, current balance, and reward points.

        Args:
            user_id: The ID of the user to look up credit card accounts for
        """
        return self.lookup("credit_card_accounts", "user_id", user_id)

    @tool(ToolType.WRITE)
    def log_verification(
        self,
        name: str,
        user_id: str,
        address: str,
        email: str,
        phone_number: str,
        date_of_birth: str,
        time_verified: str,
    ) -> str:
        """Log a verification record after successfully verifying a user's identity.

        Call this tool after you have verified a user by confirming 2 out of 4 identity fields
        (date of birth, email, phone number, address). This creates an audit record of the verification.

        Args:
            name: The verified user's full name
            user_id: The verified user's ID
            address: The verified user's address
            email: The verified user's email
            phone_number: The verified user's phone number
            date_of_birth: The verified user's date of birth (MM/DD/YYYY format)
            time_verified: The timestamp of the verification (e.g., "2025-11-14 03:40:00 EST")
        """
        record = {
            "name": name,
            "user_id": user_id,
            "address": address,
            "email": email,
            "phone_number": phone_number,
            "date_of_birth": date_of_birth,
            "time_verified": time_verified,
        }
        if not self.add("verification_history", R.verification_id(user_id, time_verified), record):
            return "Failed to log verification: Record may already exist."
        return f"Verification logged successfully.\n  - User: {name} (ID: {user_id})\n  - Verified at: {time_verified}"

    @tool(ToolType.GENERIC, mutates_state=True)
    def give_discoverable_user_tool(self, discoverable_tool_name: str, arguments: str = "{}") -> str:
        """Pass a tool to the user so they can execute it themselves.

        Use this when the knowledge base indicates that the user should perform
        an action themselves (e.g., "to do X, have the user call tool_name(args)").

        The user will then be able to call `call_discoverable_tool` with the same
        tool name and arguments to simulate executing the action.

        Args:
            discoverable_tool_name: The name of the discoverable tool (e.g., "open_webpage", "navigate_to_section")
            arguments: JSON string of arguments for the tool (e.g., '{"url": "https://example.com"}')

        Returns:
            A confirmation message with instructions for the user
        """
        from .user_tools import KnowledgeUserTools

        spec = KnowledgeUserTools.declared_tools.get(discoverable_tool_name)
        if spec is None or not spec.discoverable:
            return f"Error: Unknown discoverable tool '{discoverable_tool_name}'."
        try:
            suggested = json.loads(arguments)
        except json.JSONDecodeError as exc:
            return f"Error: Invalid JSON in arguments: {exc}"
        method = getattr(KnowledgeUserTools, discoverable_tool_name)
        parameters = inspect.signature(method).parameters
        for name in suggested:
            if name not in parameters and name != "self":
                return f"Error: Unexpected parameter: {name}"
        info = tool_info(method)
        self.given[discoverable_tool_name] = {"arguments": suggested, "given_at": R.NOW.isoformat(), "tool_info": info}
        self.add(
            "user_discoverable_tools",
            R.user_tool_id(discoverable_tool_name),
            {"tool_name": discoverable_tool_name, "status": "GIVEN"},
        )
        shown = json.dumps(suggested, indent=2) if suggested else "(no arguments)"
        return (
            f"Tool given to user: {discoverable_tool_name}\nDescription: {info['description']}\n"
            f"Arguments: {shown}\n\n"
            f"The user can now execute this action by calling `call_discoverable_user_tool` "
            f"with discoverable_tool_name='{discoverable_tool_name}' and the same arguments."
        )

    @tool(ToolType.GENERIC, mutates_state=True)
    def unlock_discoverable_agent_tool(self, agent_tool_name: str) -> str:
        """Unlock an agent discoverable tool that was found in the knowledge base.

        Use this when the knowledge base indicates that you have access to a specialized
        internal tool. The knowledge base will tell you the tool name to unlock.

        After unlocking, you can use the tool by calling `call_discoverable_agent_tool` with
        the tool name and required arguments.

        Args:
            agent_tool_name: The name of the agent discoverable tool to unlock
                            (e.g., "calculate_apr_adjustment_7842")

        Returns:
            A confirmation message with the tool's description and parameters
        """
        tools = self.discoverable()
        if agent_tool_name not in tools:
            return f"Error: Unknown agent tool '{agent_tool_name}'. This tool is not available."
        info = tool_info(tools[agent_tool_name])
        self.unlocked[agent_tool_name] = {"unlocked_at": R.NOW.isoformat(), "tool_info": info}
        return (
            f"Tool unlocked: {agent_tool_name}\nDescription: {info['description']}\n\n{unlock_text(info)}\n\n"
            f"You can now use this tool by calling `call_discoverable_agent_tool` with "
            f"agent_tool_name='{agent_tool_name}' and the required arguments."
        )

    @tool(ToolType.WRITE)
    def call_discoverable_agent_tool(self, agent_tool_name: str, arguments: str = "{}") -> str:
        """Call an agent discoverable tool that you have previously unlocked.

        Use this after unlocking a tool with `unlock_discoverable_agent_tool`. The knowledge base
        will tell you which tool to use and what arguments to provide.

        Args:
            agent_tool_name: The name of the agent discoverable tool to call
            arguments: JSON string of arguments for the tool (e.g., '{"user_id": "abc123"}')

        Returns:
            The result of executing the agent tool
        """
        tools = self.discoverable()
        if agent_tool_name not in tools:
            return f"Error: Unknown agent tool '{agent_tool_name}'. This tool is not available."
        if agent_tool_name not in self.unlocked:
            return (
                f"Error: Tool '{agent_tool_name}' has not been unlocked. "
                f"You must first use `unlock_discoverable_agent_tool` to unlock this tool before calling it."
            )
        try:
            parsed = json.loads(arguments, parse_int=float)  # 2500 and 2500.0 must give the same ids and hashes
        except json.JSONDecodeError as exc:
            return f"Error: Invalid JSON in arguments: {exc}"
        try:
            result = tools[agent_tool_name](**parsed)
        except TypeError as exc:
            return f"Error: Invalid arguments: {exc}"
        if self.spec(agent_tool_name).mutates_state or agent_tool_name in self.read_log_allowlist:
            self.add(
                "agent_discoverable_tools",
                R.agent_tool_id(agent_tool_name),
                {"tool_name": agent_tool_name, "status": "CALLED"},
            )
        return result

    @tool(ToolType.READ)
    def list_discoverable_agent_tools(self) -> str:
        """List all agent discoverable tools that you have called.

        Use this to see what specialized tools you have used.

        Returns:
            A list of tools that you have called
        """
        result = self.select("agent_discoverable_tools", {})
        if "No results found" in result:
            return "No agent tools have been called yet. Search the knowledge base to discover available tools."
        return f"Your called agent tools:\n{result}"

    # --- shared checks ------------------------------------------------------------------------
    def _history(self, heading: str, tool_name: str, subject: str, listing: str, none: str) -> str:
        """A look-up's answer: a heading, what ran, for what, then the listing (or a 'none found' line)."""
        return _lines(heading, "", f"Executed: {tool_name}", subject, listing if R.found(listing) else f"\n{none}")

    def _card_account_missing(self, cc_account_id: str) -> str | None:
        if not R.found(self.lookup("credit_card_accounts", "account_id", cc_account_id)):
            return f"Error: Credit card account '{cc_account_id}' not found."
        return None

    def _activation_problem(self, card_id, last_4_digits, expiration_date, cvv, pin, allowed, tool_name):
        if not all([card_id, last_4_digits, expiration_date, cvv, pin]):
            return "Error: Missing required parameters. Required: card_id, last_4_digits, expiration_date, cvv, pin."
        problem = pin_problem(pin)
        if problem:
            return f"Error: {problem}"
        if not cvv.isdigit() or len(cvv) != 3:
            return "Error: CVV must be exactly 3 digits."
        if not last_4_digits.isdigit() or len(last_4_digits) != 4:
            return "Error: Last 4 digits must be exactly 4 digits."
        cards = self.rows("debit_cards")
        if card_id not in cards:
            return f"Error: Debit card '{card_id}' not found."
        card = cards[card_id]
        reason = card.get("issue_reason", "new_account")
        if reason not in allowed:
            return (
                f"Error: Wrong activation tool. This card has issue_reason='{reason}'. "
                f"Please use {ACTIVATION_TOOL.get(reason, 'unknown')} instead of {tool_name}."
            )
        if card.get("status") == "ACTIVE":
            return f"Error: Debit card '{card_id}' is already active."
        if card.get("status") != "PENDING":
            return (
                f"Error: Debit card '{card_id}' cannot be activated. Current status: {card.get('status')}. "
                f"Only PENDING cards can be activated."
            )
        if card.get("last_4_digits") != last_4_digits:
            return "Error: Card verification failed. The last 4 digits do not match our records."
        account_id = card.get("account_id")
        accounts = self.rows("accounts")
        if account_id and account_id in accounts and accounts[account_id].get("status") != "OPEN":
            return f"Error: The linked checking account '{account_id}' is no longer open. Card cannot be activated."
        return None

    def _activate(self, card_id: str, new_status: str, stamp: str, why: str) -> list[str]:
        """Activate a card; other ACTIVE cards of its account get ``new_status``. Returns their ids."""
        card = self.record("debit_cards", card_id)
        card["status"] = "ACTIVE"
        card["activated_date"] = TODAY
        others = []
        for other_id in list(self.rows("debit_cards")):
            other = self.rows("debit_cards")[other_id]
            if (
                other_id != card_id
                and other.get("account_id") == card.get("account_id")
                and other.get("status") == "ACTIVE"
            ):
                other = self.record("debit_cards", other_id)
                other["status"] = new_status
                other[stamp] = TODAY
                other["deactivation_reason"] = why
                others.append(other_id)
        return others

    # =========================================================================================
    # Discoverable agent tools: reached through unlock_discoverable_agent_tool and
    # call_discoverable_agent_tool only. Their docstrings are what unlocking shows the agent.
    # =========================================================================================
    @tool(ToolType.WRITE, discoverable=True)
    def example_agent_tool_0000(self) -> str:
        """An example agent discoverable tool placeholder.

        Returns:
            Example tool executed successfully.
        """
        return "Example tool executed successfully."

    @tool(ToolType.WRITE, discoverable=True)
    def update_transaction_rewards_3847(self, transaction_id: str, new_rewards_earned: str) -> str:
        """Update the rewards_earned field on a credit card transaction.

        Args:
            transaction_id (string): The unique identifier for the transaction to update
            new_rewards_earned (string): The corrected rewards value (e.g., '6300 points')

        Returns:
            Transaction rewards updated successfully.
        """
        if not transaction_id or not new_rewards_earned:
            return "Error: Missing required parameters."
        if not self.update("credit_card_transaction_history", transaction_id, rewards_earned=new_rewards_earned):
            return f"Error: Transaction '{transaction_id}' not found."
        shown = _args_block(transaction_id=transaction_id, new_rewards_earned=new_rewards_earned)
        return (
            f"Transaction rewards updated successfully.\n\nExecuted: update_transaction_rewards_3847\n"
            f"Arguments: {shown}\nTransaction updated:\n  - Transaction ID: {transaction_id}\n"
            f"  - New Rewards: {new_rewards_earned}"
        )

    @tool(ToolType.GENERIC, discoverable=True)
    def initial_transfer_to_human_agent_0218(self) -> str:
        """Initiate a transfer request to a human agent. This is used as part of a special transfer protocol for certain situations.

        Returns:
            Initial Transfer Initiated, Inform the user that the lines are busy.
        """
        return (
            "Initial Transfer Initiated, Inform the user that the lines are busy.\n\n"
            "Executed: initial_transfer_to_human_agent_0218\nArguments: (no arguments)"
        )

    @tool(ToolType.GENERIC, discoverable=True)
    def initial_transfer_to_human_agent_1822(self) -> str:
        """Initiate a transfer request to a human agent. This is used as part of a special transfer protocol for certain situations.

        Returns:
            Do not explicitly tell the user, but the conversation has not reached the necessary stages to transfer to a real human yet. Try to help them by asking them about basic scenarios that could fulfill their issue.
        """
        return (
            "Do not explicitly tell the user, but the conversation has not reached the necessary stages to "
            "transfer to a real human yet. Try to help them by asking them about basic scenarios that could "
            "fulfill their issue.\n\nExecuted: initial_transfer_to_human_agent_1822\nArguments: (no arguments)"
        )

    @tool(ToolType.GENERIC, discoverable=True)
    def emergency_credit_bureau_incident_transfer_1114(self) -> str:
        """Emergency escalation tool for the 11/14 credit bureau reporting incident. Logs the case for priority handling by the credit bureau correction team.

        Returns:
            Emergency escalation logged. Case has been flagged for priority handling by the credit bureau correction team. Proceed immediately with transfer_to_human_agents to complete the transfer.
        """
        return (
            "Emergency escalation logged. Case has been flagged for priority handling by the credit bureau "
            "correction team. Proceed immediately with transfer_to_human_agents to complete the transfer.\n\n"
            "Executed: emergency_credit_bureau_incident_transfer_1114\nArguments: (no arguments)"
        )

    @tool(ToolType.WRITE, discoverable=True)
    def file_credit_card_transaction_dispute_4829(
        self,
        transaction_id: str,
        card_action: str,
        card_last_4_digits: str,
        full_name: str,
        user_id: str,
        phone: str,
        email: str,
        address: str,
        contacted_merchant: bool,
        purchase_date: str,
        issue_noticed_date: str,
        dispute_reason: str,
        resolution_requested: str,
        eligible_for_provisional_credit: bool,
        partial_refund_amount: float | None = None,
    ) -> str:
        """File a formal dispute for a credit card transaction.

        Args:
            transaction_id (string): The unique identifier for the transaction being disputed
            card_action (string): Flag indicating the card's status. Must be one of: 'keep_active' (card remains active, dispute only), 'cancel_and_reissue' (card is being cancelled and replaced). This is for record-keeping only and does NOT order a replacement card.
            card_last_4_digits (string): Last 4 digits of the credit card number
            full_name (string): Full legal name of the cardholder
            user_id (string): The user's unique identifier in the system
            phone (string): Contact phone number
            email (string): Contact email address
            address (string): Contact mailing address
            contacted_merchant (boolean): Whether the user attempted to resolve the issue with the merchant first
            purchase_date (string): Date when the purchase was made, format MM/DD/YYYY
            issue_noticed_date (string): Date when the user noticed the issue, format MM/DD/YYYY
            dispute_reason (string): Reason for the dispute. Must be one of: 'unauthorized_fraudulent_charge', 'duplicate_charge', 'incorrect_amount', 'goods_services_not_received', 'goods_services_not_as_described', 'canceled_subscription_still_charging', 'refund_never_processed'
            resolution_requested (string): Resolution being requested. Must be one of: 'full_refund', 'partial_refund'
            eligible_for_provisional_credit (boolean): Whether the user is eligible for provisional credit
            partial_refund_amount (number, optional): Amount requested for partial refund (required only if resolution_requested is 'partial_refund')

        Returns:
            Credit card transaction dispute filed successfully. A case has been opened and will be reviewed within 10 business days.
        """
        if not transaction_id or not user_id:
            return "Error: Missing required parameters."
        actions = ["keep_active", "cancel_and_reissue"]
        if card_action not in actions:
            return f"Error: Invalid card_action. Must be one of: {actions}"
        reasons = [
            "unauthorized_fraudulent_charge",
            "duplicate_charge",
            "incorrect_amount",
            "goods_services_not_received",
            "goods_services_not_as_described",
            "canceled_subscription_still_charging",
            "refund_never_processed",
        ]
        if dispute_reason not in reasons:
            return f"Error: Invalid dispute_reason. Must be one of: {reasons}"
        resolutions = ["full_refund", "partial_refund"]
        if resolution_requested not in resolutions:
            return f"Error: Invalid resolution_requested. Must be one of: {resolutions}"
        if resolution_requested == "partial_refund" and partial_refund_amount is None:
            return "Error: partial_refund_amount is required when resolution_requested is 'partial_refund'."
        did = R.dispute_id(user_id, transaction_id)
        record = {
            "dispute_id": did,
            "transaction_id": transaction_id,
            "user_id": user_id,
            "card_action": card_action,
            "card_last_4_digits": card_last_4_digits,
            "full_name": full_name,
            "phone": phone,
            "email": email,
            "address": address,
            "contacted_merchant": contacted_merchant,
            "purchase_date": purchase_date,
            "issue_noticed_date": issue_noticed_date,
            "dispute_reason": dispute_reason,
            "resolution_requested": resolution_requested,
            "partial_refund_amount": partial_refund_amount,
            "eligible_for_provisional_credit": eligible_for_provisional_credit,
            "provisional_credit_given": eligible_for_provisional_credit,
            "submitted_at": TODAY,
            "status": "SUBMITTED",
        }
        if not self.add("transaction_disputes", did, record):
            return "Error: Dispute may have already been filed for this transaction."
        out = [
            "Credit card transaction dispute filed successfully. A case has been opened and will be reviewed "
            "within 10 business days.",
            "",
            "Executed: file_credit_card_transaction_dispute_4829",
            f"Dispute ID: {did}",
            f"Transaction: {transaction_id}",
            f"Reason: {R.title(dispute_reason)}",
            f"Resolution Requested: {R.title(resolution_requested)}",
        ]
        if partial_refund_amount:
            out.append(f"Partial Refund Amount: ${partial_refund_amount:.2f}")
        out.append(
            "Provisional Credit: ELIGIBLE - Credit will be applied within 2 business days."
            if eligible_for_provisional_credit
            else "Provisional Credit: Not eligible at this time."
        )
        return "\n".join(out)

    @tool(ToolType.WRITE, discoverable=True)
    def file_debit_card_transaction_dispute_6281(
        self,
        transaction_id: str,
        account_id: str,
        card_id: str,
        user_id: str,
        dispute_category: str,
        transaction_date: str,
        discovery_date: str,
        disputed_amount: float,
        transaction_type: str,
        card_in_possession: bool,
        pin_compromised: str,
        contacted_merchant: bool,
        police_report_filed: bool,
        written_statement_provided: bool,
        provisional_credit_eligible: bool,
        customer_max_liability_amount: float,
        card_action: str,
    ) -> str:
        """File a formal dispute for a debit card transaction under Regulation E. Debit card disputes affect actual bank funds and have different liability rules based on reporting timing.

        Args:
            transaction_id (string): The unique identifier for the transaction being disputed
            account_id (string): The checking account ID linked to the debit card
            card_id (string): The debit card ID
            user_id (string): The user's unique identifier in the system
            dispute_category (string): Category of the dispute. Must be one of: 'unauthorized_transaction', 'atm_cash_discrepancy', 'atm_deposit_not_credited', 'duplicate_charge', 'incorrect_amount', 'goods_services_not_received', 'recurring_charge_after_cancellation', 'card_present_fraud', 'card_not_present_fraud'
            transaction_date (string): Date when the transaction occurred, format MM/DD/YYYY
            discovery_date (string): Date when the user first noticed the issue, format MM/DD/YYYY
            disputed_amount (number): The dollar amount being disputed
            transaction_type (string): Type of transaction. Must be one of: 'pin_purchase', 'signature_purchase', 'online_purchase', 'atm_withdrawal', 'atm_deposit', 'recurring_payment', 'person_to_person'
            card_in_possession (boolean): Whether the customer still has their physical debit card in their possession
            pin_compromised (string): Whether the customer's PIN may have been compromised. Must be one of: 'yes_shared', 'yes_observed', 'no', 'unknown'
            contacted_merchant (boolean): Whether the user attempted to resolve the issue with the merchant first
            police_report_filed (boolean): Whether a police report has been filed (recommended for fraud over $500)
            written_statement_provided (boolean): Whether the customer has provided a written statement describing what happened (required for Reg E provisional credit)
            provisional_credit_eligible (boolean): Whether the user is eligible for provisional credit based on Debit Card Provisional Credit Guidelines
            customer_max_liability_amount (number): The maximum dollar amount the customer could be liable for based on Regulation E reporting timing rules and the disputed amount. Use -1 for unlimited liability.
            card_action (string): Action to take on the card. Must be one of: 'keep_active', 'freeze_pending_investigation', 'close_and_reissue'

        Returns:
            Debit card transaction dispute filed successfully. A case has been opened and provisional credit determination has been recorded.
        """
        if not all(
            [
                transaction_id,
                account_id,
                card_id,
                user_id,
                dispute_category,
                transaction_date,
                discovery_date,
                disputed_amount,
                transaction_type,
                pin_compromised,
                card_action,
            ]
        ):
            return "Error: Missing required parameters."
        if customer_max_liability_amount is None:
            return "Error: customer_max_liability_amount is required."
        if None in (card_in_possession, contacted_merchant, police_report_filed, written_statement_provided):
            return (
                "Error: card_in_possession, contacted_merchant, police_report_filed, and "
                "written_statement_provided are required boolean fields."
            )
        categories = [
            "unauthorized_transaction",
            "atm_cash_discrepancy",
            "atm_deposit_not_credited",
            "duplicate_charge",
            "incorrect_amount",
            "goods_services_not_received",
            "recurring_charge_after_cancellation",
            "card_present_fraud",
            "card_not_present_fraud",
        ]
        if dispute_category not in categories:
            return f"Error: Invalid dispute_category. Must be one of: {categories}"
        types = [
            "pin_purchase",
            "signature_purchase",
            "online_purchase",
            "atm_withdrawal",
            "atm_deposit",
            "recurring_payment",
            "person_to_person",
        ]
        if transaction_type not in types:
            return f"Error: Invalid transaction_type. Must be one of: {types}"
        pins = ["yes_shared", "yes_observed", "no", "unknown"]
        if pin_compromised not in pins:
            return f"Error: Invalid pin_compromised. Must be one of: {pins}"
        actions = ["keep_active", "freeze_pending_investigation", "close_and_reissue"]
        if card_action not in actions:
            return f"Error: Invalid card_action. Must be one of: {actions}"
        if disputed_amount <= 0:
            return "Error: disputed_amount must be a positive number."
        did = R.dispute_id(user_id, transaction_id)
        fraud = dispute_category in ("unauthorized_transaction", "card_present_fraud", "card_not_present_fraud")
        shared = pin_compromised == "yes_shared"
        record = {
            "dispute_id": did,
            "transaction_id": transaction_id,
            "account_id": account_id,
            "card_id": card_id,
            "user_id": user_id,
            "dispute_category": dispute_category,
            "transaction_date": transaction_date,
            "discovery_date": discovery_date,
            "disputed_amount": disputed_amount,
            "transaction_type": transaction_type,
            "card_in_possession": card_in_possession,
            "pin_compromised": pin_compromised,
            "contacted_merchant": contacted_merchant,
            "police_report_filed": police_report_filed,
            "written_statement_provided": written_statement_provided,
            "provisional_credit_eligible": provisional_credit_eligible,
            "provisional_credit_issued": provisional_credit_eligible,
            "provisional_credit_amount": disputed_amount if provisional_credit_eligible else None,
            "customer_max_liability_amount": customer_max_liability_amount,
            "card_action": card_action,
            "is_fraud_category": fraud,
            "pin_shared_voluntarily": shared,
            "submitted_at": TODAY,
            "status": "OPEN",
        }
        if not self.add("debit_card_disputes", did, record):
            return "Error: Dispute may have already been filed for this transaction."
        out = [
            f"Dispute ID: {did}",
            f"Transaction: {transaction_id}",
            f"Account: {account_id}",
            f"Category: {R.title(dispute_category)}",
            f"Disputed Amount: ${disputed_amount:.2f}",
            f"Card Action: {R.title(card_action)}",
        ]
        if provisional_credit_eligible:
            out.append(
                f"Provisional Credit: ISSUED - ${disputed_amount:.2f} credited within 10 business days "
                f"per Regulation E."
            )
        else:
            out.append("Provisional Credit: Not eligible - see Debit Card Provisional Credit Guidelines for details.")
        if shared:
            out.append(
                "WARNING: Customer indicated PIN was shared voluntarily. This may affect liability determination."
            )
        if fraud and not police_report_filed and disputed_amount > 500:
            out.append("RECOMMENDATION: For fraud disputes over $500, filing a police report is recommended.")
        return "\n".join(out)

    @tool(ToolType.WRITE, discoverable=True)
    def set_debit_card_recurring_block_7382(self, card_id: str, block_recurring: bool) -> str:
        """Block or unblock all recurring payments on a debit card. When blocked, all recurring/subscription charges will be declined. One-time purchases are not affected.

        Args:
            card_id (string): The debit card ID to update
            block_recurring (boolean): True to block all recurring payments, False to unblock/allow recurring payments

        Returns:
            Debit card recurring payment settings updated successfully.
        """
        if not card_id:
            return "Error: Missing required parameter: card_id"
        card = self.rows("debit_cards").get(card_id)
        if not card:
            return f"Error: Debit card '{card_id}' not found."
        status = card.get("status", "").upper()
        if status != "ACTIVE":
            return (
                f"Error: Cannot update recurring block settings for a card with status '{status}'. Card must be ACTIVE."
            )
        self.record("debit_cards", card_id)["recurring_blocked"] = block_recurring
        if block_recurring:
            return (
                f"Recurring payments BLOCKED for debit card {card_id}.\n"
                "All recurring/subscription charges will be declined.\nOne-time purchases are not affected.\n"
                "This change takes effect within 24 hours."
            )
        return (
            f"Recurring payments UNBLOCKED for debit card {card_id}.\n"
            "Recurring/subscription charges will now be allowed.\nThis change takes effect within 24 hours."
        )

    @tool(ToolType.READ, discoverable=True)
    def get_debit_dispute_status_7483(self, user_id: str) -> str:
        """Retrieve a user's debit card dispute history from the debit_card_disputes table. Returns all debit card disputes filed by the user, including dispute IDs, categories, amounts, statuses, and provisional credit information.

        Args:
            user_id (string): The user's unique identifier in the system

        Returns:
            Debit card dispute history retrieved successfully.
        """
        if not user_id:
            return "Error: Missing required parameter: user_id"
        return self._history(
            "Debit card dispute history retrieved successfully.",
            "get_debit_dispute_status_7483",
            f"Debit card dispute history for user {user_id}:",
            self.lookup("debit_card_disputes", "user_id", user_id),
            "No debit card disputes found for this user.",
        )

    @tool(ToolType.READ, discoverable=True)
    def get_atm_deposit_images_8473(self, transaction_id: str) -> str:
        """Retrieve ATM deposit envelope/check images for a specific ATM deposit transaction.

        Args:
            transaction_id (string): The transaction ID of the ATM deposit to retrieve images for

        Returns:
            ATM deposit images retrieved successfully.
        """
        from .atm_images import IMAGES

        if not transaction_id:
            return "Error: Missing required parameter: transaction_id"
        txns = self.rows("bank_account_transaction_history")
        if transaction_id not in txns:
            return f"Error: Transaction '{transaction_id}' not found."
        txn = txns[transaction_id]
        if txn.get("type") != "atm_deposit":
            return (
                f"Error: Transaction '{transaction_id}' is not an ATM deposit. This tool only works for ATM "
                f"deposit transactions."
            )
        description = txn.get("description", "")
        if "RHO-BANK" not in description.upper() and "RHOBANK" not in description.upper():
            return (
                f"Error: Transaction '{transaction_id}' is from a third-party ATM. Deposit images are only "
                f"available for Rho-Bank ATM deposits. For third-party ATM disputes, a chargeback request must "
                f"be submitted to the ATM network."
            )
        header = "ATM Deposit Image Retrieval Results\n=====================================\n"
        date = txn.get("date", "Unknown")
        if transaction_id in IMAGES:
            atm, scan, notes = IMAGES[transaction_id]
            return (
                f"{header}Transaction ID: {transaction_id}\nATM: {atm}\nDeposit Date: {date}\n\n{scan}\n\n"
                f"--- VERIFICATION NOTES ---\n{notes}\n"
            )
        return (
            f"{header}Transaction ID: {transaction_id}\nATM: {description}\nDeposit Date: {date}\n"
            f"Amount Recorded: ${abs(txn.get('amount', 0)):.2f}\n\n--- IMAGE STATUS ---\n"
            "Status: IMAGES NOT AVAILABLE\nReason: Deposit images for this transaction have either expired "
            "(older than 90 days) or were not captured by the ATM system.\n\nFor deposits without available "
            "images, the dispute will proceed based on customer statement and ATM journal records only. "
            "Investigation timeline may be extended.\n"
        )

    @tool(ToolType.WRITE, discoverable=True)
    def order_replacement_credit_card_7291(
        self,
        credit_card_account_id: str,
        user_id: str,
        shipping_address: str,
        reason: str,
        expedited_shipping: bool = False,
    ) -> str:
        """Order a replacement credit card for a customer. The old card will be automatically cancelled when the replacement is ordered.

        Args:
            credit_card_account_id (string): The credit card account ID for the card being replaced
            user_id (string): The user's unique identifier in the system
            shipping_address (string): Full shipping address where the new card should be sent
            reason (string): Reason for replacement. Must be one of: 'fraud_suspected', 'lost', 'stolen', 'damaged', 'expired', 'other'
            expedited_shipping (boolean, optional): Whether to use expedited shipping (2-3 business days instead of 7-10)

        Returns:
            Replacement credit card order placed successfully. The old card has been cancelled for security.
        """
        if not credit_card_account_id or not user_id or not shipping_address or not reason:
            return "Error: Missing required parameters (credit_card_account_id, user_id, shipping_address, reason)."
        reasons = ["fraud_suspected", "lost", "stolen", "damaged", "expired", "other"]
        if reason not in reasons:
            return f"Error: Invalid reason. Must be one of: {reasons}"
        missing = self._card_account_missing(credit_card_account_id)
        if missing:
            return missing
        oid = R.card_order_id(credit_card_account_id, user_id, reason)
        order = {
            "order_id": oid,
            "credit_card_account_id": credit_card_account_id,
            "user_id": user_id,
            "shipping_address": shipping_address,
            "reason": reason,
            "expedited_shipping": expedited_shipping,
            "order_date": TODAY,
            "status": "ORDERED",
            "old_card_cancelled": True,
        }
        if not self.add("credit_card_orders", oid, order):
            return "Error: Order may have already been placed for this card replacement."
        if credit_card_account_id in self.rows("credit_card_accounts"):
            account = self.record("credit_card_accounts", credit_card_account_id)
            account["status"] = "CLOSED"
            account["closed_date"] = TODAY
        return _lines(
            f"Order ID: {oid}",
            f"Card Account: {credit_card_account_id}",
            f"Reason: {R.title(reason)}",
            f"Shipping Address: {shipping_address}",
            f"Shipping Method: {'Expedited' if expedited_shipping else 'Standard'}",
            f"Expected Delivery: {'2-3 business days' if expedited_shipping else '7-10 business days'}",
            "",
            "The old card has been cancelled for security. The new card will have the same account "
            "number but a new card number and CVV.",
        )

    @tool(ToolType.READ, discoverable=True)
    def get_user_dispute_history_7291(self, user_id: str) -> str:
        """Retrieve a user's credit card transaction dispute history from the transaction_disputes table. Returns all credit card transaction disputes filed by the user, including dispute IDs, transaction IDs, dispute reasons, statuses, and submission dates.

        Args:
            user_id (string): The user's unique identifier in the system

        Returns:
            User transaction dispute history retrieved successfully.
        """
        if not user_id:
            return "Error: Missing required parameter: user_id"
        return self._history(
            "User transaction dispute history retrieved successfully.",
            "get_user_dispute_history_7291",
            f"Transaction dispute history for user {user_id}:",
            self.lookup("transaction_disputes", "user_id", user_id),
            "No transaction disputes found for this user.",
        )

    @tool(ToolType.READ, discoverable=True)
    def get_pending_replacement_orders_5765(self, credit_card_account_id: str) -> str:
        """Check if a credit card account has any pending replacement card orders.

        Args:
            credit_card_account_id (string): The credit card account ID to check for pending replacement orders

        Returns:
            Pending replacement orders check completed.
        """
        if not credit_card_account_id:
            return "Error: Missing required parameter: credit_card_account_id"
        return self._history(
            "Pending replacement orders check completed.",
            "get_pending_replacement_orders_5765",
            f"Replacement orders for credit card account {credit_card_account_id}:",
            self.lookup("credit_card_orders", "credit_card_account_id", credit_card_account_id),
            "No pending replacement orders found for this credit card account.",
        )

    @tool(ToolType.WRITE, discoverable=True)
    def log_credit_card_closure_reason_4521(
        self, credit_card_account_id: str, user_id: str, closure_reason: str
    ) -> str:
        """Log the reason why a customer wants to close their credit card account.

        Args:
            credit_card_account_id (string): The credit card account ID the customer wants to close
            user_id (string): The user's unique identifier in the system
            closure_reason (string): Reason for closure. Must be one of: 'annual_fee', 'not_using_card', 'found_better_card', 'unhappy_with_rewards', 'simplifying_finances', 'negative_experience', 'other'

        Returns:
            Closure reason logged successfully.
        """
        if not credit_card_account_id or not user_id or not closure_reason:
            return "Error: Missing required parameters."
        reasons = [
            "annual_fee",
            "not_using_card",
            "found_better_card",
            "unhappy_with_rewards",
            "simplifying_finances",
            "negative_experience",
            "other",
        ]
        if closure_reason not in reasons:
            return f"Error: Invalid closure_reason. Must be one of: {reasons}"
        rid = R.closure_reason_id(credit_card_account_id, user_id)
        self.add(
            "credit_card_closure_reasons",
            rid,
            {
                "record_id": rid,
                "credit_card_account_id": credit_card_account_id,
                "user_id": user_id,
                "closure_reason": closure_reason,
                "logged_at": TODAY,
                "status": "LOGGED",
            },
        )
        shown = _args_block(
            credit_card_account_id=credit_card_account_id, user_id=user_id, closure_reason=closure_reason
        )
        return (
            f"Closure reason logged successfully.\n\nExecuted: log_credit_card_closure_reason_4521\n"
            f"Arguments: {shown}\nClosure reason '{closure_reason}' logged for account {credit_card_account_id}."
        )

    @tool(ToolType.READ, discoverable=True)
    def get_closure_reason_history_8293(self, credit_card_account_id: str) -> str:
        """Retrieve the closure reason history for a specific credit card account.

        Args:
            credit_card_account_id (string): The credit card account ID to check for previous closure attempts

        Returns:
            Closure reason history retrieved successfully.
        """
        if not credit_card_account_id:
            return "Error: Missing required parameter: credit_card_account_id"
        return self._history(
            "Closure reason history retrieved successfully.",
            "get_closure_reason_history_8293",
            f"Closure reason history for credit card account {credit_card_account_id}:",
            self.lookup("credit_card_closure_reasons", "credit_card_account_id", credit_card_account_id),
            "No closure reason records found for this credit card account.",
        )

    @tool(ToolType.WRITE, discoverable=True)
    def apply_statement_credit_8472(self, user_id: str, credit_card_account_id: str, amount: float, reason: str) -> str:
        """Apply a statement credit to a customer's credit card account.

        Args:
            user_id (string): The user's unique identifier in the system
            credit_card_account_id (string): The credit card account ID to apply the credit to
            amount (number): The credit amount in dollars (e.g., 25.00 for a $25 credit)
            reason (string): Reason for the statement credit. Must be one of: 'goodwill_adjustment', 'promotional_credit', 'annual_fee_reversal', 'late_fee_reversal', 'interest_charge_reversal', 'dispute_resolution', 'price_match', 'retention_offer', 'error_correction', 'other'

        Returns:
            Statement credit applied successfully.
        """
        if not user_id or not credit_card_account_id or amount is None or not reason:
            return "Error: Missing required parameters (user_id, credit_card_account_id, amount, reason)."
        if amount <= 0:
            return "Error: Credit amount must be positive."
        reasons = [
            "goodwill_adjustment",
            "promotional_credit",
            "annual_fee_reversal",
            "late_fee_reversal",
            "interest_charge_reversal",
            "dispute_resolution",
            "price_match",
            "retention_offer",
            "error_correction",
            "other",
        ]
        if reason not in reasons:
            return f"Error: Invalid reason. Must be one of: {reasons}"
        missing = self._card_account_missing(credit_card_account_id)
        if missing:
            return missing
        tid = R.transaction_id(user_id, "STATEMENT_CREDIT", reason, amount, "Statement Credit")
        credit = {
            "transaction_id": tid,
            "user_id": user_id,
            "credit_card_account_id": credit_card_account_id,
            "credit_card_type": "N/A",
            "merchant_name": "Rho-Bank Statement Credit",
            "transaction_amount": f"-${amount:.2f}",
            "transaction_date": TODAY,
            "category": "Statement Credit",
            "status": "COMPLETED",
            "rewards_earned": "0 points",
            "credit_reason": reason,
        }
        if not self.add("credit_card_transaction_history", tid, credit):
            return f"Error: Failed to apply statement credit. Transaction ID '{tid}' may already exist."
        return (
            f"Statement credit applied successfully.\n\nExecuted: apply_statement_credit_8472\n"
            f"  - Transaction ID: {tid}\n  - User ID: {user_id}\n  - Account: {credit_card_account_id}\n"
            f"  - Credit Amount: ${amount:.2f}\n  - Reason: {R.title(reason)}\n  - Date: {TODAY}"
        )

    @tool(ToolType.WRITE, discoverable=True)
    def apply_credit_card_account_flag_6147(
        self, credit_card_account_id: str, user_id: str, flag_type: str, expiration_date: str, reason: str
    ) -> str:
        """Apply a flag to a customer's credit card account. Flags can include annual fee waivers, promotional APR rates, rewards bonuses, or other account-level modifiers. Each flag has an effective date and expiration date.

        Args:
            credit_card_account_id (string): The credit card account ID to apply the flag to
            user_id (string): The user's unique identifier in the system
            flag_type (string): Type of flag to apply. Must be one of: 'annual_fee_waived', 'promotional_apr', 'rewards_bonus', 'other'
            expiration_date (string): Date when the flag expires (MM/DD/YYYY format)
            reason (string): Reason for applying this flag. Must be one of: 'retention_offer', 'loyalty_benefit', 'promotional', 'error_correction', 'other'

        Returns:
            Account flag applied successfully.
        """
        if not credit_card_account_id or not user_id or not flag_type or not expiration_date or not reason:
            return (
                "Error: Missing required parameters (credit_card_account_id, user_id, flag_type, "
                "expiration_date, reason)."
            )
        flags = ["annual_fee_waived", "promotional_apr", "rewards_bonus", "other"]
        if flag_type not in flags:
            return f"Error: Invalid flag_type. Must be one of: {flags}"
        reasons = ["retention_offer", "loyalty_benefit", "promotional", "error_correction", "other"]
        if reason not in reasons:
            return f"Error: Invalid reason. Must be one of: {reasons}"
        missing = self._card_account_missing(credit_card_account_id)
        if missing:
            return missing
        fid = R.account_flag_id(credit_card_account_id, flag_type, expiration_date)
        flag = {
            "flag_id": fid,
            "credit_card_account_id": credit_card_account_id,
            "user_id": user_id,
            "flag_type": flag_type,
            "effective_date": TODAY,
            "expiration_date": expiration_date,
            "reason": reason,
            "applied_at": TODAY,
            "status": "ACTIVE",
        }
        if not self.add("credit_card_account_flags", fid, flag):
            return f"Error: Failed to apply account flag. Flag ID '{fid}' may already exist."
        return (
            f"Account flag applied successfully!\n  - Flag ID: {fid}\n  - Account: {credit_card_account_id}\n"
            f"  - User ID: {user_id}\n  - Flag Type: {R.title(flag_type)}\n  - Effective Date: {TODAY}\n"
            f"  - Expiration Date: {expiration_date}\n  - Reason: {R.title(reason)}"
        )

    @tool(ToolType.WRITE, discoverable=True)
    def close_credit_card_account_7834(self, credit_card_account_id: str, user_id: str) -> str:
        """Close a customer's credit card account permanently.

        Args:
            credit_card_account_id (string): The credit card account ID to close
            user_id (string): The user's unique identifier in the system

        Returns:
            Credit card account closed successfully.
        """
        if not credit_card_account_id or not user_id:
            return "Error: Missing required parameters (credit_card_account_id, user_id)."
        missing = self._card_account_missing(credit_card_account_id)
        if missing:
            return missing
        if not self.update(
            "credit_card_accounts", credit_card_account_id, status="CLOSED", closed_date=TODAY, closed_by=user_id
        ):
            return f"Error: Failed to close credit card account '{credit_card_account_id}'."
        shown = _args_block(credit_card_account_id=credit_card_account_id, user_id=user_id)
        return (
            f"Credit card account closed successfully.\n\nExecuted: close_credit_card_account_7834\n"
            f"Arguments: {shown}\nAccount {credit_card_account_id} has been closed."
        )

    @tool(ToolType.WRITE, discoverable=True)
    def pay_credit_card_from_checking_9182(
        self, user_id: str, checking_account_id: str, credit_card_account_id: str, amount: float
    ) -> str:
        """Pay off a credit card balance using funds from the customer's Rho-Bank checking account. This deducts the specified amount from the checking account and reduces the credit card balance by the same amount.

        Args:
            user_id (string): The customer's unique identifier in the system
            checking_account_id (string): The ID of the Rho-Bank checking account to debit funds from
            credit_card_account_id (string): The ID of the credit card account to apply the payment to
            amount (number): The payment amount in dollars. Must be a positive number.

        Returns:
            Credit card payment processed successfully.
        """
        if not user_id or not checking_account_id or not credit_card_account_id or amount is None:
            return "Error: Missing required parameters (user_id, checking_account_id, credit_card_account_id, amount)."
        try:
            amount = float(amount)
            if amount <= 0:
                return "Error: Payment amount must be a positive number."
        except (ValueError, TypeError):
            return "Error: Invalid payment amount. Must be a positive number."
        accounts = self.rows("accounts")
        if checking_account_id not in accounts:
            return f"Error: Checking account '{checking_account_id}' not found."
        checking = accounts[checking_account_id]
        if checking.get("user_id") != user_id:
            return f"Error: Checking account '{checking_account_id}' does not belong to user '{user_id}'."
        if checking.get("class") != "checking":
            return f"Error: Account '{checking_account_id}' is not a checking account."
        balance = R.money(checking.get("current_holdings", checking.get("balance", 0)))
        if amount > balance:
            return (
                f"Error: Insufficient funds in checking account. Available balance: ${balance:.2f}, "
                f"requested payment: ${amount:.2f}."
            )
        cards = self.rows("credit_card_accounts")
        if credit_card_account_id not in cards:
            return f"Error: Credit card account '{credit_card_account_id}' not found."
        card = cards[credit_card_account_id]
        if card.get("user_id") != user_id:
            return f"Error: Credit card account '{credit_card_account_id}' does not belong to user '{user_id}'."
        try:
            owed = float(str(card.get("current_balance", "$0.00")).replace("$", "").replace(",", ""))
        except (ValueError, TypeError):
            owed = 0.0
        if amount > owed:
            return (
                f"Error: Payment amount (${amount:.2f}) exceeds credit card balance (${owed:.2f}). "
                f"Please specify an amount up to the outstanding balance."
            )
        new_checking, new_owed = balance - amount, owed - amount
        self.record("accounts", checking_account_id)["current_holdings"] = f"{new_checking:.2f}"
        self.record("credit_card_accounts", credit_card_account_id)["current_balance"] = f"${new_owed:.2f}"
        return (
            f"Payment processed successfully!\n  - Payment Amount: ${amount:.2f}\n"
            f"  - From Checking Account: {checking_account_id}\n"
            f"  - To Credit Card Account: {credit_card_account_id}\n"
            f"  - New Checking Balance: ${new_checking:.2f}\n  - New Credit Card Balance: ${new_owed:.2f}\n"
            f"The payment has been applied immediately."
        )

    @tool(ToolType.WRITE, discoverable=True)
    def submit_credit_limit_increase_request_7392(
        self, credit_card_account_id: str, user_id: str, requested_increase_amount: int
    ) -> str:
        """Submit a credit limit increase request for a customer's credit card.

        Args:
            credit_card_account_id (string): The credit card account ID to request increase for
            user_id (string): The customer's unique identifier in the system
            requested_increase_amount (integer): The dollar amount by which to increase the credit limit (e.g., 2500 for $2,500)

        Returns:
            Credit limit increase request submitted successfully.
        """
        if not credit_card_account_id or not user_id or requested_increase_amount is None:
            return "Error: Missing required parameters."
        try:
            amount = float(requested_increase_amount)
        except (TypeError, ValueError):
            return "Error: Invalid requested_increase_amount. Must be a whole number."
        if not amount.is_integer():
            return "Error: Invalid requested_increase_amount. Must be a whole number of dollars."
        whole = int(amount)  # stored and shown as an int, however the caller spelled it
        if whole <= 0:
            return "Error: Requested increase amount must be positive."
        cards = self.rows("credit_card_accounts")
        if credit_card_account_id not in cards:
            return f"Error: Credit card account '{credit_card_account_id}' not found."
        if cards[credit_card_account_id].get("user_id") != user_id:
            return f"Error: Credit card account '{credit_card_account_id}' does not belong to user '{user_id}'."
        rid = R.limit_request_id(credit_card_account_id, user_id, whole)
        request = {
            "request_id": rid,
            "credit_card_account_id": credit_card_account_id,
            "user_id": user_id,
            "requested_increase_amount": whole,
            "submitted_at": TODAY,
            "status": "PENDING",
        }
        if not self.add("credit_limit_increase_requests", rid, request):
            return "Error: A similar request may already exist."
        return (
            f"Credit limit increase request submitted successfully.\n\n"
            f"Executed: submit_credit_limit_increase_request_7392\n  - Request ID: {rid}\n"
            f"  - Account: {credit_card_account_id}\n  - Requested Increase: ${whole:,}\n  - Status: PENDING"
        )

    @tool(ToolType.READ, discoverable=True)
    def get_credit_limit_increase_history_4829(self, credit_card_account_id: str) -> str:
        """Retrieve the credit limit increase request history for a specific credit card account. Returns all previous CLI requests including dates, amounts, and statuses.

        Args:
            credit_card_account_id (string): The credit card account ID to check for CLI history

        Returns:
            Credit limit increase history retrieved.
        """
        if not credit_card_account_id:
            return "Error: Missing required parameter: credit_card_account_id"
        return self._history(
            "Credit limit increase history retrieved.",
            "get_credit_limit_increase_history_4829",
            f"Credit limit increase history for account {credit_card_account_id}:",
            self.lookup("credit_limit_increase_requests", "credit_card_account_id", credit_card_account_id),
            "No credit limit increase requests found for this account.",
        )

    @tool(ToolType.READ, discoverable=True)
    def get_payment_history_6183(self, credit_card_account_id: str, months: int) -> str:
        """Retrieve payment history for a credit card account.

        Args:
            credit_card_account_id (string): The credit card account ID to check payment history for
            months (integer): Number of months of payment history to retrieve

        Returns:
            Payment history retrieved.
        """
        if not credit_card_account_id or months is None:
            return "Error: Missing required parameters (credit_card_account_id, months)."
        try:
            months = int(months)
            if months <= 0:
                return "Error: months must be a positive integer."
        except (ValueError, TypeError):
            return "Error: Invalid months value. Must be a positive integer."
        payments = [
            p
            for p in self.rows("payment_history").values()
            if p.get("credit_card_account_id") == credit_card_account_id
        ]
        if not payments:
            return f"No payment history found for account '{credit_card_account_id}'."
        payments = sorted(payments, key=lambda p: p.get("payment_date") or "", reverse=True)[:months]
        streak = 0
        for payment in payments:
            if payment.get("status") != "ON_TIME":
                break
            streak += 1
        out = [
            f"Payment history for account '{credit_card_account_id}' (last {months} months):",
            f"Consecutive on-time payments: {streak}",
        ]
        out += [
            f"\n  - Payment Date: {p.get('payment_date')}\n    Amount: {p.get('amount')}\n    Status: {p.get('status')}"
            for p in payments
        ]
        return "\n".join(out)

    @tool(ToolType.WRITE, discoverable=True)
    def approve_credit_limit_increase_5847(
        self, credit_card_account_id: str, user_id: str, new_credit_limit: int
    ) -> str:
        """Approve and apply a credit limit increase for a customer's credit card.

        Args:
            credit_card_account_id (string): The credit card account ID
            user_id (string): The customer's unique identifier in the system
            new_credit_limit (integer): The new total credit limit in dollars (e.g., 7500 for $7,500)

        Returns:
            Credit limit increase approved and applied successfully.
        """
        if not credit_card_account_id or not user_id or new_credit_limit is None:
            return "Error: Missing required parameters."
        cards = self.rows("credit_card_accounts")
        if credit_card_account_id not in cards:
            return f"Error: Credit card account '{credit_card_account_id}' not found."
        card = cards[credit_card_account_id]
        if card.get("user_id") != user_id:
            return f"Error: Credit card account '{credit_card_account_id}' does not belong to user '{user_id}'."
        blocked = any(
            d.get("user_id") == user_id and d.get("status") in ("SUBMITTED", "UNDER_REVIEW", "PENDING")
            for d in self.rows("transaction_disputes").values()
        )
        blocked = blocked or any(
            o.get("credit_card_account_id") == credit_card_account_id
            and o.get("status") in ("PENDING", "PROCESSING", "SHIPPED")
            for o in self.rows("credit_card_orders").values()
        )
        blocked = blocked or card.get("account_status", "").upper() in (
            "PAST_DUE",
            "DELINQUENT",
            "COLLECTIONS",
            "CLOSED",
        )
        if blocked:
            return "Error: Credit limit increase request cannot be approved at this time."
        try:
            current = float(str(card.get("credit_limit", "$0.00")).replace("$", "").replace(",", ""))
        except (ValueError, TypeError):
            current = 0.0
        new_limit = float(new_credit_limit)
        self.record("credit_card_accounts", credit_card_account_id)["credit_limit"] = f"${new_limit:.2f}"
        rid = R.limit_request_id(credit_card_account_id, user_id, new_limit - current)
        self.add(
            "credit_limit_increase_requests",
            rid,
            {
                "request_id": rid,
                "credit_card_account_id": credit_card_account_id,
                "user_id": user_id,
                "previous_limit": f"${current:.2f}",
                "new_limit": f"${new_limit:.2f}",
                "increase_amount": f"${new_limit - current:.2f}",
                "decision_date": TODAY,
                "status": "APPROVED",
            },
        )
        return (
            f"Credit limit increase approved!\n  - Account: {credit_card_account_id}\n"
            f"  - Previous Limit: ${current:.2f}\n  - New Limit: ${new_limit:.2f}\n"
            f"  - Increase: ${new_limit - current:.2f}\n  - Effective Date: {TODAY}\n"
            f"The customer will receive a confirmation email."
        )

    @tool(ToolType.WRITE, discoverable=True)
    def deny_credit_limit_increase_5848(self, credit_card_account_id: str, user_id: str, denial_reason: str) -> str:
        """Deny a credit limit increase request for a customer's credit card.

        Args:
            credit_card_account_id (string): The credit card account ID
            user_id (string): The customer's unique identifier in the system
            denial_reason (string): The reason for denying the request. Must be one of: 'insufficient_account_age', 'cooldown_period_active', 'pending_disputes', 'pending_replacement_card', 'past_due_balance', 'high_utilization', 'insufficient_payment_history', 'requested_amount_exceeds_limit', 'other'

        Returns:
            Credit limit increase request denied.
        """
        if not credit_card_account_id or not user_id or not denial_reason:
            return "Error: Missing required parameters."
        reasons = [
            "insufficient_account_age",
            "cooldown_period_active",
            "pending_disputes",
            "pending_replacement_card",
            "past_due_balance",
            "high_utilization",
            "insufficient_payment_history",
            "requested_amount_exceeds_limit",
            "other",
        ]
        if denial_reason not in reasons:
            return f"Error: Invalid denial_reason. Must be one of: {', '.join(reasons)}"
        if credit_card_account_id not in self.rows("credit_card_accounts"):
            return f"Error: Credit card account '{credit_card_account_id}' not found."
        rid = R.limit_request_id(credit_card_account_id, user_id, 0.0)
        self.add(
            "credit_limit_increase_requests",
            rid,
            {
                "request_id": rid,
                "credit_card_account_id": credit_card_account_id,
                "user_id": user_id,
                "denial_reason": denial_reason,
                "decision_date": TODAY,
                "status": "DENIED",
            },
        )
        return (
            f"Credit limit increase request denied.\n  - Account: {credit_card_account_id}\n"
            f"  - Denial Reason: {denial_reason}\n  - Date: {TODAY}\n"
            f"The customer will receive a notification explaining the denial."
        )

    @tool(ToolType.WRITE, discoverable=True)
    def open_bank_account_4821(self, user_id: str, account_type: str, account_class: str) -> str:
        """Open a new bank account for a customer.

        Args:
            user_id (string): The customer's unique identifier in the system
            account_type (string): Type of account to open. Must be one of: 'checking' (personal checking), 'savings' (personal savings), 'business_checking', 'business_savings'
            account_class (string): The full official account class name

        Returns:
            Bank account opened successfully.
        """
        if not user_id or not account_type or not account_class:
            return "Error: Missing required parameters."
        kinds = ["checking", "savings", "business_checking", "business_savings"]
        if account_type not in kinds:
            return f"Error: Invalid account_type. Must be one of: {kinds}"
        owned = [a for a in self.rows("accounts").values() if a.get("user_id") == user_id]

        def kind(acc: dict[str, Any]) -> Any:
            return acc.get("account_type", acc.get("class", ""))

        def live(acc: dict[str, Any]) -> bool:
            return acc.get("status", "") in ("OPEN", "ACTIVE")

        refused = "Error: Account eligibility requirements not met."
        if account_type == "savings":
            if not any(
                kind(a) in ("checking", "personal_checking") and live(a) and _days_since(a.get("date_opened", "")) >= 14
                for a in owned
            ):
                return refused
        if account_type == "business_checking":
            if any(a.get("status") == "CLOSED" for a in owned):
                return refused
            if not any(kind(a) in ("checking", "personal_checking") and live(a) for a in owned):
                return refused
        if account_type == "business_savings":
            if any(R.money(a.get("current_holdings", a.get("balance", 0))) < 0 for a in owned):
                return refused
            if not any(
                kind(a) == "business_checking" and live(a) and _days_since(a.get("date_opened", "")) >= 30
                for a in owned
            ):
                return refused
        aid = R.hex_id(f"account:{user_id}:{account_type}:{account_class}")
        account = {
            "account_id": aid,
            "user_id": user_id,
            "account_type": account_type,
            "account_class": account_class,
            "current_holdings": "0.00",
            "status": "OPEN",
            "date_opened": TODAY,
        }
        if not self.add("accounts", aid, account):
            return f"Failed to open account: Account ID '{aid}' may already exist."
        return (
            f"Bank account opened successfully!\n  - Account ID: {aid}\n  - User ID: {user_id}\n"
            f"  - Account Type: {account_type}\n  - Account Class: {account_class}\n  - Status: OPEN\n"
            f"  - Initial Balance: $0.00\n  - Date Opened: {TODAY}"
        )

    @tool(ToolType.WRITE, discoverable=True)
    def close_bank_account_7392(
        self, account_id: str, reason: str = "Customer requested closure", waive_early_closure_fee: bool = False
    ) -> str:
        """Close a customer's bank account (checking or savings).

        Args:
            account_id (string): The ID of the bank account to close
            reason (string, optional): The reason for closing the account
            waive_early_closure_fee (boolean, optional): Whether to waive early closure fees

        Returns:
            Bank account closed successfully.
        """
        if not account_id:
            return "Error: Missing required parameter (account_id)."
        accounts = self.rows("accounts")
        if account_id not in accounts:
            return f"Error: Account '{account_id}' not found."
        account = accounts[account_id]
        if account.get("status") == "CLOSED":
            return f"Error: Account '{account_id}' is already closed."
        balance = R.money(account.get("current_holdings", account.get("balance", 0)))
        fee = 0.0
        if not waive_early_closure_fee:
            table = {"checking": CHECKING_EARLY_CLOSURE, "savings": SAVINGS_EARLY_CLOSURE}.get(account.get("class", ""))
            terms = table.get(account.get("level", "")) if table is not None else None
            opened = account.get("date_opened", "")
            if terms and opened:
                try:
                    age = (R.NOW - datetime.strptime(opened, "%m/%d/%Y")).days
                    if age < terms[1]:
                        if balance < terms[0]:
                            return "Error: Account unable to be closed."
                        fee = terms[0]
                except ValueError:
                    pass
        if balance - fee != 0:
            return f"Error: Account balance must be $0.00 before closing. Current balance: ${balance:.2f}"
        account = self.record("accounts", account_id)
        account.update(
            status="CLOSED", date_closed=TODAY, closure_reason=reason, early_closure_fee_waived=waive_early_closure_fee
        )
        return (
            f"Bank account closed successfully!\n  - Account ID: {account_id}\n"
            f"  - Account Type: {account.get('account_type', 'N/A')}\n"
            f"  - Account Class: {account.get('account_class', 'N/A')}\n  - Status: CLOSED\n"
            f"  - Date Closed: {TODAY}\n  - Reason: {reason}\n"
            f"  - Early Closure Fee Waived: {'Yes' if waive_early_closure_fee else 'No'}"
        )

    @tool(ToolType.READ, discoverable=True)
    def get_all_user_accounts_by_user_id_3847(self, user_id: str) -> str:
        """Retrieve all accounts (checking, savings, credit cards) for a customer.

        Args:
            user_id (string): The customer's unique identifier in the system

        Returns:
            User accounts retrieved successfully.
        """
        if not user_id:
            return "Error: Missing required parameter: user_id"
        bank = self.lookup("accounts", "user_id", user_id)
        cards = self.lookup("credit_card_accounts", "user_id", user_id)
        return _lines(
            "User accounts retrieved successfully.",
            "",
            "Executed: get_all_user_accounts_by_user_id_3847",
            f"Accounts for user {user_id}:",
            "",
            "Bank Accounts:",
            bank if R.found(bank) else "  No bank accounts found.",
            "\nCredit Card Accounts:",
            cards if R.found(cards) else "  No credit card accounts found.",
        )

    @tool(ToolType.WRITE, discoverable=True)
    def transfer_funds_between_bank_accounts_7291(
        self, source_account_id: str, destination_account_id: str, amount: float
    ) -> str:
        """Transfer funds from one bank account to another.

        Args:
            source_account_id (string): The account ID to transfer funds from
            destination_account_id (string): The account ID to transfer funds to
            amount (number): The amount to transfer in USD

        Returns:
            Funds transferred successfully.
        """
        if not source_account_id or not destination_account_id or amount is None:
            return "Error: Missing required parameters (source_account_id, destination_account_id, amount)."
        try:
            amount = float(amount)
        except (ValueError, TypeError):
            return f"Error: Invalid amount '{amount}'. Must be a number."
        if amount <= 0:
            return "Error: Transfer amount must be positive."
        if source_account_id == destination_account_id:
            return "Error: Source and destination accounts cannot be the same."
        accounts = self.rows("accounts")
        if source_account_id not in accounts:
            return f"Error: Source account '{source_account_id}' not found."
        if destination_account_id not in accounts:
            return f"Error: Destination account '{destination_account_id}' not found."
        source, dest = accounts[source_account_id], accounts[destination_account_id]
        if source.get("status") not in ("ACTIVE", "OPEN"):
            return f"Error: Source account '{source_account_id}' is not active."
        if dest.get("status") not in ("ACTIVE", "OPEN"):
            return f"Error: Destination account '{destination_account_id}' is not active."
        have = R.money(source.get("current_holdings", source.get("balance", 0)))
        if have < amount:
            return (
                f"Error: Insufficient funds. Source account balance is ${have:.2f}, "
                f"but transfer amount is ${amount:.2f}."
            )
        dest_balance = R.money(dest.get("current_holdings", dest.get("balance", 0)))
        new_source, new_dest = have - amount, dest_balance + amount
        self.record("accounts", source_account_id)["current_holdings"] = f"${new_source:.2f}"
        self.record("accounts", destination_account_id)["current_holdings"] = f"${new_dest:.2f}"
        return (
            f"Transfer completed successfully!\n  - Amount: ${amount:.2f}\n"
            f"  - From: {source_account_id} (new balance: ${new_source:.2f})\n"
            f"  - To: {destination_account_id} (new balance: ${new_dest:.2f})"
        )

    def _credit_account(
        self,
        account_id: Any,
        amount: Any,
        credit_type: Any,
        types: list[str],
        classes: tuple[str, ...],
        wrong_class: str,
        balance_prefix: str,
        seed: str,
        descriptions: dict[str, str],
    ) -> str:
        """Credit a bank account and post the credit as a transaction (the checking and savings tools)."""
        if not account_id or amount is None or not credit_type:
            return "Error: Missing required parameters."
        try:
            amount = float(amount)
        except (TypeError, ValueError):
            return "Error: Invalid credit amount. Must be a number."
        if amount <= 0:
            return "Error: Credit amount must be positive."
        if credit_type not in types:
            return f"Error: Invalid credit_type. Must be one of: {types}"
        accounts = self.rows("accounts")
        if account_id not in accounts:
            return f"Error: Account '{account_id}' not found."
        account = accounts[account_id]
        if account.get("class", "").lower() not in classes:
            return wrong_class.format(account_id=account_id)
        if account.get("status") not in ("ACTIVE", "OPEN"):
            return f"Error: Account '{account_id}' is not active."
        before = R.money(account.get("current_holdings", account.get("balance", 0)))
        after = before + amount
        self.record("accounts", account_id)["current_holdings"] = f"{balance_prefix}{after:.2f}"
        tid = "txn_" + R.hex_id(f"{seed}:{account_id}:{credit_type}:{amount}:{TODAY}")
        self.db.set(
            "bank_account_transaction_history",
            "data",
            tid,
            {
                "transaction_id": tid,
                "account_id": account_id,
                "date": TODAY,
                "description": descriptions[credit_type],
                "amount": amount,
                "type": credit_type,
                "status": "posted",
            },
        )
        return (
            f"\nCredit applied successfully!\n  - Transaction ID: {tid}\n  - Account: {account_id}\n"
            f"  - Credit Type: {credit_type}\n  - Amount: ${amount:.2f}\n  - Previous Balance: ${before:.2f}\n"
            f"  - New Balance: ${after:.2f}"
        )

    @tool(ToolType.WRITE, discoverable=True)
    def apply_checking_account_credit_5829(self, account_id: str, amount: float, credit_type: str) -> str:
        """Apply a credit to a customer's checking account.

        Args:
            account_id (string): The checking account ID to credit
            amount (number): The positive dollar amount to credit (must be greater than 0)
            credit_type (string): The type of credit: 'rebate_credit' for missing rebates, 'fee_refund' for incorrect fee charges

        Returns:
            Credit applied to checking account successfully.
        """
        return self._credit_account(
            account_id,
            amount,
            credit_type,
            ["rebate_credit", "fee_refund"],
            ("checking",),
            "Error: Account '{account_id}' is not a checking account. Credits can only be applied to checking "
            "accounts.",
            "$",
            "checking_credit",
            {"rebate_credit": "REBATE CREDIT - CUSTOMER SERVICE", "fee_refund": "FEE REFUND - CUSTOMER SERVICE"},
        )

    @tool(ToolType.WRITE, discoverable=True)
    def apply_savings_account_credit_6831(self, account_id: str, amount: float, credit_type: str) -> str:
        """Apply a credit to a customer's savings account for interest corrections, fee refunds, or goodwill adjustments.

        Args:
            account_id (string): The savings account ID to credit
            amount (number): The positive dollar amount to credit (must be greater than 0)
            credit_type (string): The type of credit: 'interest_correction' for APY/interest calculation errors, 'fee_refund' for incorrect fee charges, 'goodwill_credit' for customer service gestures

        Returns:
            Credit applied to savings account successfully.
        """
        return self._credit_account(
            account_id,
            amount,
            credit_type,
            ["interest_correction", "fee_refund", "goodwill_credit"],
            ("saving", "savings"),
            "Error: Account '{account_id}' is not a savings account. This tool only applies to savings accounts.",
            "",
            "savings_credit",
            {
                "interest_correction": "INTEREST CORRECTION - CUSTOMER SERVICE",
                "fee_refund": "FEE REFUND - CUSTOMER SERVICE",
                "goodwill_credit": "GOODWILL CREDIT - CUSTOMER SERVICE",
            },
        )

    @tool(ToolType.WRITE, discoverable=True)
    def submit_interest_discrepancy_report_7294(
        self, account_id: str, user_id: str, expected_apy: float, actual_apy: float, amount_difference: float
    ) -> str:
        """Submit a report for interest calculation discrepancies to the backend team for investigation. Use this when the interest credited to a customer's account does not match expected APY calculations.

        Args:
            account_id (string): The savings account ID with the discrepancy
            user_id (string): The customer's unique identifier
            expected_apy (number): The APY percentage the customer should have received (e.g., 2.775 for 2.775%)
            actual_apy (number): The APY percentage that was actually applied (e.g., 2.5 for 2.5%)
            amount_difference (number): The dollar amount difference between expected and actual interest credited

        Returns:
            Interest discrepancy report submitted successfully. Backend team will investigate.
        """
        if not account_id or not user_id or expected_apy is None or actual_apy is None or amount_difference is None:
            return "Error: Missing required parameters."
        try:
            expected_apy, actual_apy, amount_difference = (
                float(expected_apy),
                float(actual_apy),
                float(amount_difference),
            )
        except (ValueError, TypeError):
            return "Error: expected_apy, actual_apy, and amount_difference must be numbers."
        account = self.rows("accounts").get(account_id)
        if account is None:
            return f"Error: Account '{account_id}' not found."
        user = self.rows("users").get(user_id)
        if user is None:
            return f"Error: User '{user_id}' not found."
        rid = "IDR_" + R.hex_id(f"interest_report:{account_id}:{user_id}:{expected_apy}:{actual_apy}:{TODAY}")
        level = account.get("level", "Unknown")
        # tau2 files these in a table the DB does not have, so nothing is stored.
        self.add("interest_discrepancy_reports", rid, {"report_id": rid})
        return (
            f"\nInterest Discrepancy Report Submitted Successfully!\n  - Report ID: {rid}\n"
            f"  - Account: {account_id} ({level})\n  - Customer: {user.get('name', 'Unknown')}\n"
            f"  - Expected APY: {expected_apy}%\n  - Actual APY: {actual_apy}%\n"
            f"  - APY Difference: {round(expected_apy - actual_apy, 4)}%\n"
            f"  - Amount Difference: ${amount_difference:.2f}\n  - Status: PENDING_REVIEW\n"
            f"\nThe backend team will investigate this discrepancy and ensure "
            f"correct APY calculations are applied going forward."
        )

    @tool(ToolType.READ, discoverable=True)
    def get_bank_account_transactions_9173(self, account_id: str) -> str:
        """Retrieve the transaction history for a bank account.

        Transactions are returned in reverse chronological order (most recent
        first).

        Args:
            account_id (string): The bank account ID to retrieve transactions for

        Returns:
            Bank account transactions retrieved successfully.
        """
        if not account_id:
            return "Error: Missing required parameter: account_id"
        if account_id not in self.rows("accounts"):
            return f"Error: Account '{account_id}' not found."
        txns = [
            (tid, t)
            for tid, t in self.rows("bank_account_transaction_history").items()
            if _matches(t.get("account_id"), account_id)
        ]

        def when(item: tuple[str, dict[str, Any]]) -> datetime:
            text = str(item[1].get("date", ""))
            for fmt in ("%m/%d/%Y %H:%M:%S", "%m/%d/%Y"):
                try:
                    return datetime.strptime(text, fmt)
                except ValueError:
                    continue
            return datetime.min

        txns.sort(key=when, reverse=True)  # stable: same-day records keep their stored order
        body = (
            R.listing("bank_account_transaction_history", txns) if txns else "\nNo transactions found for this account."
        )
        return _lines(
            "Bank account transactions retrieved successfully.",
            "",
            "Executed: get_bank_account_transactions_9173",
            f"Transactions for account {account_id}:",
            body,
        )

    @tool(ToolType.WRITE, discoverable=True)
    def order_debit_card_5739(
        self,
        account_id: str,
        user_id: str,
        delivery_option: str,
        delivery_fee: float,
        card_design: str,
        design_fee: float,
        shipping_address: str,
        excess_replacement_fee: float | None = None,
    ) -> str:
        """Order a new debit card for a customer's checking account.

        Args:
            account_id (string): The checking account ID to link the debit card to
            user_id (string): The customer's unique identifier
            delivery_option (string): Shipping speed: STANDARD, EXPEDITED, or RUSH
            delivery_fee (number): Fee to charge for delivery in dollars
            card_design (string): Card design: CLASSIC, PREMIUM, or CUSTOM
            design_fee (number): Fee to charge for card design in dollars
            shipping_address (string): Full shipping address for card delivery
            excess_replacement_fee (number, optional): Fee for exceeding replacement limit, if applicable

        Returns:
            Debit card order placed successfully.
        """
        excess = excess_replacement_fee or 0
        try:
            delivery_fee = float(delivery_fee) if delivery_fee is not None else None
        except (TypeError, ValueError):
            return "Error: delivery_fee must be a number."
        try:
            design_fee = float(design_fee) if design_fee is not None else None
        except (TypeError, ValueError):
            return "Error: design_fee must be a number."
        try:
            excess = float(excess)
        except (TypeError, ValueError):
            excess = 0
        if not all(
            [
                account_id,
                user_id,
                delivery_option,
                delivery_fee is not None,
                card_design,
                design_fee is not None,
                shipping_address,
            ]
        ):
            return (
                "Error: Missing required parameters. Required: account_id, user_id, delivery_option, "
                "delivery_fee, card_design, design_fee, shipping_address."
            )
        speeds = ["STANDARD", "EXPEDITED", "RUSH"]
        if delivery_option.upper() not in speeds:
            return f"Error: Invalid delivery_option. Must be one of: {speeds}"
        delivery_option = delivery_option.upper()
        designs = ["CLASSIC", "PREMIUM", "CUSTOM"]
        if card_design.upper() not in designs:
            return f"Error: Invalid card_design. Must be one of: {designs}"
        card_design = card_design.upper()
        accounts = self.rows("accounts")
        if account_id not in accounts:
            return f"Error: Account '{account_id}' not found."
        account = accounts[account_id]
        if account.get("class") != "checking":
            return (
                f"Error: Debit cards can only be ordered for checking accounts. Account '{account_id}' is a "
                f"{account.get('class')} account."
            )
        if account.get("status") != "OPEN":
            return f"Error: Account must be OPEN. Account '{account_id}' has status: {account.get('status')}"
        if account.get("user_id") != user_id:
            return f"Error: Account '{account_id}' does not belong to user '{user_id}'."
        try:
            holdings = float(str(account.get("current_holdings", "0")).replace(",", ""))
        except ValueError:
            holdings = 0.0
        if holdings < 25.0:
            return f"Error: Account must have a minimum balance of $25. Current balance: ${holdings:.2f}"
        if any(
            o.get("account_id") == account_id and o.get("status") == "PENDING"
            for o in self.rows("debit_card_orders").values()
        ):
            return f"Error: There is already a pending debit card order for account '{account_id}'."
        if (
            sum(
                1
                for c in self.rows("debit_cards").values()
                if c.get("account_id") == account_id and c.get("status") == "ACTIVE"
            )
            >= 1
        ):
            return (
                f"Error: Account '{account_id}' already has an active debit card. Maximum 1 active card per "
                f"checking account."
            )
        total = delivery_fee + design_fee + excess
        if total > 0 and holdings < total:
            return f"Error: Insufficient funds for fees. Total fees: ${total:.2f}. Current balance: ${holdings:.2f}"
        expected = {"STANDARD": "7-10 business days", "EXPEDITED": "3-5 business days", "RUSH": "1-2 business days"}[
            delivery_option
        ]
        oid = R.debit_order_id(account_id, user_id, delivery_option)
        order = {
            "order_id": oid,
            "account_id": account_id,
            "user_id": user_id,
            "delivery_option": delivery_option,
            "card_design": card_design,
            "shipping_address": shipping_address,
            "delivery_fee": delivery_fee,
            "design_fee": design_fee,
            "excess_replacement_fee": excess,
            "total_fee": total,
            "order_date": TODAY,
            "expected_delivery": expected,
            "status": "PENDING",
        }
        if not self.add("debit_card_orders", oid, order):
            return "Error: Failed to create debit card order. Order may already exist."
        fee_parts = []
        if delivery_fee > 0:
            fee_parts.append(("Delivery", f"${delivery_fee}"))
        if design_fee > 0:
            fee_parts.append(("Design", f"${design_fee}"))
        if excess > 0:
            fee_parts.append(("Excess Replacement", f"${excess:.0f}"))
        if total > 0:
            self.record("accounts", account_id)["current_holdings"] = f"{holdings - total:.2f}"
            fee_id = f"btxn_dcfee_{oid[-8:]}"
            self.add(
                "bank_account_transaction_history",
                fee_id,
                {
                    "transaction_id": fee_id,
                    "account_id": account_id,
                    "date": TODAY,
                    "description": "DEBIT CARD ORDER FEE - " + ", ".join(f"{k} {v}" for k, v in fee_parts),
                    "amount": -total,
                    "type": "debit_card_fee",
                    "status": "posted",
                },
            )
        cid = R.debit_card_id(account_id, user_id, TODAY)
        last4 = "".join(c for c in R.hex_id(f"card_details:{cid}:last4", 8) if c.isdigit())[:4].zfill(4)
        cvv = "".join(c for c in R.hex_id(f"card_details:{cid}:cvv", 6) if c.isdigit())[:3].zfill(3)
        holder = "CARDHOLDER"
        if user_id in self.rows("users"):
            holder = self.rows("users")[user_id].get("name", "CARDHOLDER").upper()
        month, _, year = TODAY.split("/")
        day = "31" if month in ("01", "03", "05", "07", "08", "10", "12") else "28" if month == "02" else "30"
        existing = [c for c in self.rows("debit_cards").values() if c.get("account_id") == account_id]
        closed = next((c for c in existing if c.get("status") == "CLOSED"), None)
        if closed:
            why = closed.get("closure_reason", "first_card")
            reason = (
                ("fraud" if why == "fraud_suspected" else why)
                if why in ("lost", "stolen", "fraud", "fraud_suspected")
                else "first_card"
            )
        else:
            reason = "first_card" if existing else "new_account"
        self.add(
            "debit_cards",
            cid,
            {
                "card_id": cid,
                "account_id": account_id,
                "user_id": user_id,
                "cardholder_name": holder,
                "last_4_digits": last4,
                "cvv": cvv,
                "status": "PENDING",
                "issue_date": TODAY,
                "expiration_date": f"{month}/{day}/{int(year) + 4}",
                "card_design": card_design,
                "issue_reason": reason,
            },
        )
        out = [
            "Debit Card Order Confirmed",
            f"Order ID: {oid}",
            f"Card ID: {cid}",
            f"Linked Account: {account_id}",
            f"Delivery Option: {delivery_option}",
            f"Card Design: {card_design}",
            f"Shipping Address: {shipping_address}",
            f"Expected Delivery: {expected}",
            "",
            "Note: Card will arrive with status PENDING. Customer must call to activate after receiving the card.",
        ]
        if total > 0:
            details = ", ".join(f"{k}: {v}" for k, v in fee_parts)
            out.append(f"Total Fees: ${total:.2f} ({details}) - CHARGED to account {account_id}")
            out.append(f"New Account Balance: ${holdings - total:.2f}")
        else:
            out.append("Total Fees: $0 (No additional charges)")
        return "\n".join(out)

    @tool(ToolType.WRITE, discoverable=True)
    def activate_debit_card_8291(
        self, card_id: str, last_4_digits: str, expiration_date: str, cvv: str, pin: str
    ) -> str:
        """Activate a NEW debit card for a customer. Use ONLY for first-time cards on a checking account (issue_reason = 'new_account' or 'first_card'). For replacement or reissued cards, use the appropriate variant.

        Args:
            card_id (string): The debit card ID to activate
            last_4_digits (string): Last 4 digits of the card number (for verification)
            expiration_date (string): Card expiration date in MM/YY format
            cvv (string): 3-digit CVV from the back of the card
            pin (string): 4-digit PIN chosen by the customer

        Returns:
            New debit card activated successfully.
        """
        problem = self._activation_problem(
            card_id, last_4_digits, expiration_date, cvv, pin, ("new_account", "first_card"), "activate_debit_card_8291"
        )
        if problem:
            return problem
        others = self._activate(card_id, "DEACTIVATED", "deactivated_date", "New card activated")
        out = [
            "New Debit Card Activation Successful",
            f"Card ID: {card_id}",
            "Status: ACTIVE",
            f"Activation Date: {TODAY}",
            "",
            "Your card is now ready to use at any ATM or point of sale terminal.",
            "For security, please sign the back of your card.",
        ]
        if others:
            out.append(f"\nNote: Previous card(s) have been deactivated: {', '.join(others)}")
        return "\n".join(out)

    @tool(ToolType.WRITE, discoverable=True)
    def activate_debit_card_8292(
        self, card_id: str, last_4_digits: str, expiration_date: str, cvv: str, pin: str
    ) -> str:
        """Activate a REPLACEMENT debit card. Use ONLY for cards replacing lost, stolen, or fraud-suspected cards (issue_reason = 'lost', 'stolen', or 'fraud'). For new or reissued cards, use the appropriate variant.

        Args:
            card_id (string): The debit card ID to activate
            last_4_digits (string): Last 4 digits of the card number (for verification)
            expiration_date (string): Card expiration date in MM/YY format
            cvv (string): 3-digit CVV from the back of the card
            pin (string): 4-digit PIN chosen by the customer

        Returns:
            Replacement debit card activated successfully.
        """
        problem = self._activation_problem(
            card_id, last_4_digits, expiration_date, cvv, pin, ("lost", "stolen", "fraud"), "activate_debit_card_8292"
        )
        if problem:
            return problem
        why = self.rows("debit_cards")[card_id].get("issue_reason", "lost")
        others = self._activate(card_id, "DEACTIVATED", "deactivated_date", f"Replacement card activated ({why})")
        out = [
            "Replacement Debit Card Activation Successful",
            f"Card ID: {card_id}",
            f"Replacement Reason: {R.title(why)}",
            "Status: ACTIVE",
            f"Activation Date: {TODAY}",
            "",
            "Your replacement card is now ready to use.",
            "",
            "IMPORTANT SECURITY REMINDERS:",
            "- Please review your recent transactions for any unauthorized charges",
            "- Report any suspicious activity immediately",
        ]
        if why == "fraud":
            out.append("- Since fraud was suspected, we recommend changing your online banking password")
        if others:
            out.append(f"\nPrevious card(s) have been deactivated for security: {', '.join(others)}")
        return "\n".join(out)

    @tool(ToolType.WRITE, discoverable=True)
    def activate_debit_card_8293(
        self, card_id: str, last_4_digits: str, expiration_date: str, cvv: str, pin: str
    ) -> str:
        """Activate a REISSUED debit card. Use ONLY for cards reissued due to expiration, damage, design upgrade, or bank-initiated replacement (issue_reason = 'expired', 'damaged', 'upgrade', or 'bank_reissue'). For new or replacement cards, use the appropriate variant.

        Args:
            card_id (string): The debit card ID to activate
            last_4_digits (string): Last 4 digits of the card number (for verification)
            expiration_date (string): Card expiration date in MM/YY format
            cvv (string): 3-digit CVV from the back of the card
            pin (string): 4-digit PIN chosen by the customer

        Returns:
            Reissued debit card activated successfully.
        """
        problem = self._activation_problem(
            card_id,
            last_4_digits,
            expiration_date,
            cvv,
            pin,
            ("expired", "damaged", "upgrade", "bank_reissue"),
            "activate_debit_card_8293",
        )
        if problem:
            return problem
        why = self.rows("debit_cards")[card_id].get("issue_reason", "expired")
        others = self._activate(card_id, "GRACE_PERIOD", "grace_period_ends", f"Reissued card activated ({why})")
        out = [
            "Reissued Debit Card Activation Successful",
            f"Card ID: {card_id}",
            f"Reissue Reason: {R.title(why)}",
            "Status: ACTIVE",
            f"Activation Date: {TODAY}",
            "",
            "Your reissued card is now ready to use.",
        ]
        if others:
            out.append(
                f"\nNote: Your previous card(s) ({', '.join(others)}) will remain active for 24 hours as a "
                f"grace period."
            )
            out.append("After 24 hours, the old card(s) will be automatically deactivated.")
        if why in ("expired", "bank_reissue"):
            out.append(
                "\nReminder: If your card number changed, please update any recurring payments with your "
                "new card details."
            )
        return "\n".join(out)

    @tool(ToolType.WRITE, discoverable=True)
    def close_debit_card_4721(self, card_id: str, reason: str) -> str:
        """Close or cancel a debit card permanently.

        Args:
            card_id (string): The debit card ID to close
            reason (string): Reason for closing: lost, stolen, fraud_suspected, damaged, no_longer_needed, or account_closing

        Returns:
            Debit card closed successfully.
        """
        if not card_id or not reason:
            return "Error: Missing required parameters. Required: card_id, reason."
        reasons = ["lost", "stolen", "fraud_suspected", "damaged", "no_longer_needed", "account_closing"]
        if reason.lower() not in reasons:
            return f"Error: Invalid reason. Must be one of: {reasons}"
        reason = reason.lower()
        if card_id not in self.rows("debit_cards"):
            return f"Error: Debit card '{card_id}' not found."
        status = self.rows("debit_cards")[card_id].get("status")
        if status not in ("ACTIVE", "PENDING"):
            return (
                f"Error: Debit card '{card_id}' cannot be closed. Current status: {status}. "
                f"Only ACTIVE or PENDING cards can be closed."
            )
        self.record("debit_cards", card_id).update(status="CLOSED", closed_date=TODAY, closure_reason=reason)
        out = [
            "Debit Card Closed Successfully",
            f"Card ID: {card_id}",
            f"Previous Status: {status}",
            "New Status: CLOSED",
            f"Closure Reason: {R.title(reason)}",
            f"Closure Date: {TODAY}",
            "",
        ]
        if reason in ("lost", "stolen", "fraud_suspected"):
            out += [
                "IMPORTANT: This card has been immediately deactivated for security.",
                "Any pending transactions may still be processed.",
            ]
            if reason == "fraud_suspected":
                out += [
                    "Please advise the customer to review recent transactions and file disputes for any "
                    "unauthorized charges.",
                    "Also recommend changing their online banking password.",
                ]
        out += [
            "",
            "Note: This card cannot be reactivated. If the customer needs a new card, they can order one "
            "through the standard ordering process.",
            "Any recurring payments linked to this card will need to be updated with new payment information.",
        ]
        return "\n".join(out)

    @tool(ToolType.WRITE, discoverable=True)
    def freeze_debit_card_3892(self, card_id: str) -> str:
        """Temporarily freeze a debit card. The card can be unfrozen later.

        Args:
            card_id (string): The debit card ID to freeze

        Returns:
            Debit card frozen successfully.
        """
        if not card_id:
            return "Error: Missing required parameter: card_id."
        if card_id not in self.rows("debit_cards"):
            return f"Error: Debit card '{card_id}' not found."
        status = self.rows("debit_cards")[card_id].get("status")
        if status == "FROZEN":
            return f"Error: Debit card '{card_id}' is already frozen."
        if status != "ACTIVE":
            return (
                f"Error: Debit card '{card_id}' cannot be frozen. Current status: {status}. "
                f"Only ACTIVE cards can be frozen."
            )
        self.record("debit_cards", card_id).update(status="FROZEN", frozen_date=TODAY)
        return _lines(
            "Debit Card Frozen Successfully",
            f"Card ID: {card_id}",
            "Status: FROZEN",
            f"Frozen Date: {TODAY}",
            "",
            "While frozen:",
            "- All new purchase transactions will be declined",
            "- Recurring payments and subscriptions will be declined",
            "- Pending transactions already authorized may still process",
            "",
            "To unfreeze, the customer can call customer service or use the mobile app.",
            "If the card is confirmed lost or stolen, recommend closing the card permanently instead.",
        )

    @tool(ToolType.WRITE, discoverable=True)
    def unfreeze_debit_card_3893(self, card_id: str) -> str:
        """Unfreeze a previously frozen debit card.

        Args:
            card_id (string): The debit card ID to unfreeze

        Returns:
            Debit card unfrozen successfully.
        """
        if not card_id:
            return "Error: Missing required parameter: card_id."
        if card_id not in self.rows("debit_cards"):
            return f"Error: Debit card '{card_id}' not found."
        card = self.rows("debit_cards")[card_id]
        if card.get("status") == "ACTIVE":
            return f"Error: Debit card '{card_id}' is already active."
        if card.get("status") != "FROZEN":
            return (
                f"Error: Debit card '{card_id}' cannot be unfrozen. Current status: {card.get('status')}. "
                f"Only FROZEN cards can be unfrozen."
            )
        account_id = card.get("account_id")
        accounts = self.rows("accounts")
        if account_id and account_id in accounts and accounts[account_id].get("status") != "OPEN":
            return f"Error: The linked checking account '{account_id}' is no longer open. Card cannot be unfrozen."
        self.record("debit_cards", card_id).update(status="ACTIVE", unfrozen_date=TODAY)
        return _lines(
            "Debit Card Unfrozen Successfully",
            f"Card ID: {card_id}",
            "Status: ACTIVE",
            f"Unfrozen Date: {TODAY}",
            "",
            "The card is now active and ready to use immediately.",
            "All transactions will process normally.",
        )

    @tool(ToolType.WRITE, discoverable=True)
    def clear_debit_card_fraud_alert_4892(self, card_id: str, reason: str) -> str:
        """Clear a fraud alert or velocity block on a debit card.

        Args:
            card_id (string): The debit card ID to clear the alert/block for
            reason (string): Reason for clearing: 'customer_verified' (for fraud alerts after customer verification) or 'velocity_clear' (for velocity blocks after identity verification)

        Returns:
            Fraud alert/velocity block cleared successfully.
        """
        if not card_id:
            return "Error: Missing required parameter: card_id."
        if not reason:
            return "Error: Missing required parameter: reason."
        reasons = ["customer_verified", "velocity_clear"]
        if reason not in reasons:
            return f"Error: Invalid reason '{reason}'. Must be one of: {', '.join(reasons)}"
        if card_id not in self.rows("debit_cards"):
            return f"Error: Debit card '{card_id}' not found."
        card = self.rows("debit_cards")[card_id]
        if reason == "velocity_clear":
            if not card.get("velocity_blocked", False):
                return f"Error: Debit card '{card_id}' does not have an active velocity block."
            self.record("debit_cards", card_id).update(velocity_blocked=False, velocity_cleared_date=TODAY)
            return _lines(
                "Velocity Block Cleared Successfully",
                f"Card ID: {card_id}",
                f"Cleared Date: {TODAY}",
                "",
                "The card is now unblocked and ready for normal use.",
                "The velocity monitoring will continue - if the same unusual patterns recur,",
                "the card may be blocked again automatically.",
            )
        if not card.get("fraud_alert_active", False):
            return f"Error: Debit card '{card_id}' does not have an active fraud alert."
        if card.get("alert_source") == "bank_initiated":
            return (
                "Error: BANK_INITIATED_ALERT - This fraud alert was initiated by the bank's fraud detection "
                "system and cannot be cleared by customer service agents. Please transfer the customer to the "
                "security team using transfer_to_human_agents."
            )
        self.record("debit_cards", card_id).update(
            fraud_alert_active=False, alert_source=None, fraud_alert_cleared_date=TODAY
        )
        return _lines(
            "Fraud Alert Cleared Successfully",
            f"Card ID: {card_id}",
            f"Cleared Date: {TODAY}",
            "",
            "The fraud alert has been removed from the card.",
            "All transactions will process normally.",
            "",
            "Remind the customer to review recent transactions and report any unauthorized charges.",
        )

    @tool(ToolType.WRITE, discoverable=True)
    def reset_debit_card_pin_6284(self, card_id: str, last_4_digits: str, new_pin: str) -> str:
        """Reset a debit card PIN when the customer has forgotten it.

        Args:
            card_id (string): The debit card ID to reset PIN for
            last_4_digits (string): Last 4 digits of the card number (for verification)
            new_pin (string): The new 4-digit PIN chosen by the customer

        Returns:
            Debit card PIN reset successfully.
        """
        if not all([card_id, last_4_digits, new_pin]):
            return "Error: Missing required parameters. Required: card_id, last_4_digits, new_pin."
        if not last_4_digits.isdigit() or len(last_4_digits) != 4:
            return "Error: Last 4 digits must be exactly 4 digits."
        problem = pin_problem(new_pin)
        if problem:
            return f"Error: {problem}"
        if card_id not in self.rows("debit_cards"):
            return f"Error: Debit card '{card_id}' not found."
        card = self.rows("debit_cards")[card_id]
        if card.get("last_4_digits") != last_4_digits:
            return "Error: Card verification failed. The last 4 digits do not match our records."
        if card.get("status") != "ACTIVE":
            return (
                f"Error: Cannot reset PIN. Card status is {card.get('status')}. "
                f"Only ACTIVE cards can have their PIN reset."
            )
        self.record("debit_cards", card_id).update(pin_last_changed=TODAY, pin_locked=False, pin_attempts_remaining=3)
        return _lines(
            "Debit Card PIN Reset Successfully",
            f"Card ID: {card_id}",
            f"PIN Changed: {TODAY}",
            "",
            "The new PIN is effective immediately.",
            "Your card has been unlocked and is ready to use.",
            "Customer can use the new PIN for ATM withdrawals and point-of-sale transactions.",
            "",
            "Security reminder: Never share your PIN with anyone.",
        )

    @tool(ToolType.WRITE, discoverable=True)
    def change_debit_card_pin_6285(self, card_id: str, current_pin: str, new_pin: str) -> str:
        """Change a debit card PIN when the customer knows their current PIN.

        Args:
            card_id (string): The debit card ID to change PIN for
            current_pin (string): The customer's current 4-digit PIN
            new_pin (string): The new 4-digit PIN chosen by the customer

        Returns:
            Debit card PIN changed successfully.
        """
        if not all([card_id, current_pin, new_pin]):
            return "Error: Missing required parameters. Required: card_id, current_pin, new_pin."
        if not current_pin.isdigit() or len(current_pin) != 4:
            return "Error: Current PIN must be exactly 4 digits."
        problem = pin_problem(new_pin)
        if problem:
            return f"Error: {problem}"
        if current_pin == new_pin:
            return "Error: New PIN must be different from current PIN."
        if card_id not in self.rows("debit_cards"):
            return f"Error: Debit card '{card_id}' not found."
        status = self.rows("debit_cards")[card_id].get("status")
        if status != "ACTIVE":
            return f"Error: Cannot change PIN. Card status is {status}. Only ACTIVE cards can have their PIN changed."
        self.record("debit_cards", card_id)["pin_last_changed"] = TODAY
        return _lines(
            "Debit Card PIN Changed Successfully",
            f"Card ID: {card_id}",
            f"PIN Changed: {TODAY}",
            "",
            "The new PIN is effective immediately.",
            "Customer can use the new PIN for ATM withdrawals and point-of-sale transactions.",
            "",
            "Security reminder: Never share your PIN with anyone.",
        )

    @tool(ToolType.READ, discoverable=True)
    def get_debit_cards_by_account_id_7823(self, account_id: str) -> str:
        """Retrieve all debit cards associated with a checking account. Returns card details including status, issue reason, and expiration date.

        Args:
            account_id (string): The checking account ID to retrieve debit cards for

        Returns:
            Debit cards retrieved successfully.
        """
        if not account_id:
            return "Error: Missing required parameter 'account_id'."
        accounts = self.rows("accounts")
        if account_id not in accounts:
            return f"Error: Account '{account_id}' not found."
        if accounts[account_id].get("class", "").lower() not in ("checking", "business_checking"):
            return (
                f"Error: Account '{account_id}' is not a checking account. Debit cards are only available for "
                f"checking accounts."
            )
        found = []
        for card_id, card in self.rows("debit_cards").items():
            if card.get("account_id") != account_id:
                continue
            info = {"card_id": card_id, **card}
            if "last_4_digits" in info and "card_number_last_4" not in info:
                info["card_number_last_4"] = info.pop("last_4_digits")
            if "issue_date" in info and "date_issued" not in info:
                info["date_issued"] = info.pop("issue_date")
            elif "created_date" in info and "date_issued" not in info:
                info["date_issued"] = info.pop("created_date")
            found.append(info)
        if not found:
            return f"No debit cards found for account '{account_id}'."
        found.sort(key=lambda c: c.get("date_issued") or "", reverse=True)
        return json.dumps(found, indent=2)

    @tool(ToolType.WRITE, discoverable=True)
    def request_temporary_debit_card_limit_increase_8374(self, card_id: str, limit_type: str, new_limit: int) -> str:
        """Request a temporary 24-hour increase to a debit card's daily ATM or purchase limit.

        Args:
            card_id (string): The debit card ID to increase limits for
            limit_type (string): Type of limit to increase: 'atm' for daily ATM withdrawal limit, 'purchase' for daily purchase limit
            new_limit (integer): The requested new temporary limit amount in dollars

        Returns:
            Temporary limit increase granted successfully.
        """
        if not card_id:
            return "Error: Missing required parameter: card_id."
        if not limit_type:
            return "Error: Missing required parameter: limit_type."
        if limit_type not in ("atm", "purchase"):
            return f"Error: Invalid limit_type '{limit_type}'. Must be 'atm' or 'purchase'."
        if new_limit is None:
            return "Error: Missing required parameter: new_limit."
        try:
            new_limit = float(new_limit)
        except (ValueError, TypeError):
            return f"Error: new_limit must be an integer, got '{new_limit}'."
        if not new_limit.is_integer():
            return f"Error: new_limit must be an integer, got '{new_limit}'."
        new_limit = int(new_limit)
        if new_limit <= 0:
            return "Error: new_limit must be a positive amount."
        if card_id not in self.rows("debit_cards"):
            return f"Error: Debit card '{card_id}' not found."
        card = self.rows("debit_cards")[card_id]
        if card.get("status") != "ACTIVE":
            return (
                f"Error: Debit card '{card_id}' is not active. Current status: {card.get('status')}. "
                f"Only ACTIVE cards can have limit increases."
            )
        account_id = card.get("account_id")
        if not account_id or account_id not in self.rows("accounts"):
            return f"Error: Could not find linked account for debit card '{card_id}'."
        account = self.rows("accounts")[account_id]
        if account.get("status") != "OPEN":
            return (
                f"Error: The linked account '{account_id}' is not in good standing. "
                f"Account status: {account.get('status')}."
            )
        opened = account.get("date_opened")
        if opened:
            try:
                age = (datetime.strptime(TODAY, "%m/%d/%Y") - datetime.strptime(opened, "%m/%d/%Y")).days
                if age < 60:
                    return (
                        f"Error: Account must be at least 60 days old for a temporary limit increase. "
                        f"Account age: {age} days."
                    )
            except ValueError:
                pass
        if limit_type == "atm":
            current, field, label = card.get("daily_atm_limit"), "daily_atm_limit", "Daily ATM Withdrawal Limit"
            if current is None:
                level = account.get("level", "").lower()
                if "light green" in level:
                    return (
                        "Error: Light Green Account (teen checking) cards have policy-based limits that cannot "
                        "be modified. The daily ATM withdrawal limit of $150 is fixed by account policy for "
                        "safety reasons. The customer may request the parent/guardian to withdraw cash from "
                        "their own account if needed."
                    )
                current = DEFAULT_ATM_LIMITS.get(level)
                if current is None:
                    return (
                        f"Error: Could not determine the default ATM limit for account type "
                        f"'{account.get('level')}'. Please verify the account type."
                    )
        else:
            current, field, label = card.get("daily_purchase_limit"), "daily_purchase_limit", "Daily Purchase Limit"
        if current is None:
            return (
                f"Error: The card does not have a {label.lower()} configured. This may be a restricted account "
                f"type where limits are set by account policy and cannot be modified."
            )
        ceiling = int(current * 1.5)
        if new_limit > ceiling:
            return (
                f"Error: Requested limit ${new_limit} exceeds the maximum allowed temporary increase. Maximum "
                f"temporary limit is ${ceiling} (150% of current ${current} limit)."
            )
        if new_limit <= current:
            return f"Error: Requested limit ${new_limit} is not higher than the current limit of ${current}."
        record = self.record("debit_cards", card_id)
        record[field] = new_limit
        record[f"temporary_{limit_type}_limit_increase"] = True
        record[f"original_{limit_type}_limit"] = current
        record[f"temporary_{limit_type}_limit_expires"] = TODAY
        return _lines(
            f"Temporary {label} Increase Granted Successfully",
            f"Card ID: {card_id}",
            f"Previous Limit: ${current}",
            f"New Temporary Limit: ${new_limit}",
            f"Increase Amount: ${new_limit - current}",
            "",
            "Important Information:",
            "- This temporary increase expires in 24 hours",
            f"- After expiration, the limit will revert to ${current}",
            "- Only one temporary increase is allowed per 24-hour period",
            "",
            "Note: If the customer is at a third-party (non-Rho-Bank) ATM, that ATM may have its own",
            "per-transaction or daily limits that Rho-Bank cannot override. The customer may need to",
            "use a Rho-Bank ATM or make multiple smaller withdrawals at third-party ATMs.",
        )


def _matches(actual: Any, expected: Any) -> bool:
    try:
        return bool(actual == expected)
    except (TypeError, ValueError):
        return False
