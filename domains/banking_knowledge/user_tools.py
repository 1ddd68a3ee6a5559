"""The bank customer's tools (tau2 ``KnowledgeUserTools``): applications, referrals, transfers, given tools.

Four tools are discoverable: the agent gives them with
``give_discoverable_user_tool`` and the customer runs them through
``call_discoverable_user_tool`` (integers become floats, required and
unexpected parameters are checked). Each of them first checks the
``user_discoverable_tools`` table, then logs the call in
``user_discoverable_tool_calls`` under an id that hashes its arguments.
The class keeps tau2's name because Python's argument errors name it.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from typing import Any

from tau_tui.env import Toolkit, ToolType, tool

from . import records as R
from .records import TODAY, Tables

CARD_TYPES = [
    "Bronze Rewards Card",
    "Business Bronze Rewards Card",
    "Business Gold Rewards Card",
    "Business Platinum Rewards Card",
    "Business Silver Rewards Card",
    "Crypto-Cash Back",
    "Diamond Elite Card",
    "EcoCard",
    "Gold Rewards Card",
    "Green Rewards Card",
    "Platinum Rewards Card",
    "Silver Rewards Card",
    "Silver Zoom Card",
]

# Cash-back percentage by card and purchase category ("default": every other category).
REWARD_RATES: dict[str, dict[str, float]] = {
    "Bronze Rewards Card": {"default": 1.0},
    "Silver Rewards Card": {"Travel": 4.0, "Software": 4.0, "default": 1.0},
    "Gold Rewards Card": {"default": 2.5},
    "Platinum Rewards Card": {"default": 10.0},
    "Business Bronze Rewards Card": {"default": 1.0},
    "Business Silver Rewards Card": {"Travel": 10.0, "Software": 10.0, "default": 1.0},
    "Green Rewards Card": {"Sustainable": 3.0, "default": 1.0},
    "Business Gold Rewards Card": {"Operations": 2.5, "default": 1.0},
    "Business Platinum Rewards Card": {"Travel": 4.0, "Software": 4.0, "Media": 4.0, "default": 1.5},
    "Silver Zoom Card": {"Transportation": 3.0, "default": 1.0},
    "Diamond Elite Card": {"default": 5.0},
    "EcoCard": {"Green": 5.0, "default": 1.0},
    "Crypto-Cash Back": {"default": 2.0},
}


class KnowledgeUserTools(Tables, Toolkit):
    """The Rho-Bank customer's toolkit (shares the agent's DB)."""

    reveals_by_reading = False

    def wrapped_tool(self, name: str, arguments: Any) -> str | None:
        """The given tool a ``call_discoverable_user_tool`` runs (tau_tui.env.tools hook)."""
        target = arguments.get("discoverable_tool_name") if isinstance(arguments, dict) else None
        spec = (
            self.declared_tools.get(target)
            if name == "call_discoverable_user_tool" and isinstance(target, str)
            else None
        )
        return target if spec is not None and spec.discoverable else None

    def _not_given(self, name: str) -> str | None:
        if "No records found" in self.lookup("user_discoverable_tools", "tool_name", name):
            return (
                f"Error: Tool '{name}' has not been given to you by the agent. "
                f"The agent must first use `give_discoverable_user_tool` to give this tool to you."
            )
        return None

    def _log_call(self, name: str, arguments: dict[str, Any]) -> None:
        self.add(
            "user_discoverable_tool_calls",
            R.user_tool_call_id(name, arguments),
            {"tool_name": name, "arguments": arguments, "called_at": TODAY, "status": "CALLED"},
        )

    def _given_call(self, name: str, **arguments: Any) -> str | None:
        """Check the tool was given and log the call; the refusal text if it was not."""
        refused = self._not_given(name)
        if refused is None:
            self._log_call(name, arguments)
        return refused

    # --- discoverable (given by the agent) -----------------------------------------------------
    @tool(ToolType.WRITE, discoverable=True)
    def submit_cash_back_dispute_0589(self, user_id: str, transaction_id: str) -> str:
        """Submit a cash back dispute for a specific transaction.

        Args:
            user_id (string): The user's unique identifier in the system
            transaction_id (string): The unique identifier for the transaction with incorrect cash back

        Returns:
            Cash back dispute submitted successfully. Your case has been queued for review.
        """
        refused = self._given_call("submit_cash_back_dispute_0589", user_id=user_id, transaction_id=transaction_id)
        if refused:
            return refused
        did = R.dispute_id(user_id, transaction_id)
        config = self.rows("task_config")
        auto = bool(config) and config.get("dispute_settings", {}).get("auto_resolve_disputes", False)
        record = {"dispute_id": did, "user_id": user_id, "transaction_id": transaction_id, "submitted_at": TODAY}
        if auto:
            record.update(status="RESOLVED", resolution="APPROVED")
            status = (
                "Status: RESOLVED - The dispute has been reviewed and approved. The transaction rewards need to "
                "be updated."
            )
        else:
            record["status"] = "SUBMITTED"
            status = "Status: SUBMITTED - Your dispute has been queued for review."
        added = self.add("cash_back_disputes", did, record)
        shown = json.dumps({"user_id": user_id, "transaction_id": transaction_id}, indent=2)
        text = (
            f"Cash back dispute submitted successfully. Your case has been queued for review.\n\n"
            f"Executed: submit_cash_back_dispute_0589\nArguments: {shown}\n"
        )
        return text + (
            f"Dispute ID: {did}\n{status}"
            if added
            else "Note: Dispute may have already been submitted for this transaction."
        )

    @tool(ToolType.WRITE, discoverable=True)
    def get_referral_link(self, user_id: str, card_name: str) -> str:
        """Generate a referral link for a specific credit card to share with friends or family.

        Args:
            user_id (string): The user's unique identifier in the system (the referrer)
            card_name (string): The name of the credit card to create a referral for (e.g., 'Gold Rewards Card')

        Returns:
            Referral link generated successfully. Share this link with the person you want to refer.
        """
        refused = self._given_call("get_referral_link", user_id=user_id, card_name=card_name)
        if refused:
            return refused
        rid = R.referral_link_id(user_id, card_name)
        added = self.add(
            "referrals",
            rid,
            {
                "referral_id": rid,
                "referrer_id": user_id,
                "referred_account_type": card_name,
                "referral_status": "NO_PROGRESS",
                "date": TODAY,
            },
        )
        shown = json.dumps({"user_id": user_id, "card_name": card_name}, indent=2)
        text = (
            f"Referral link generated successfully. Share this link with the person you want to refer.\n\n"
            f"Executed: get_referral_link\nArguments: {shown}\n"
        )
        return text + (
            f"Referral ID: {rid}\nReferral link: https://rhobank.com/refer/{rid}"
            if added
            else "Note: A referral link for this card may have already been generated."
        )

    @tool(ToolType.READ, discoverable=True)
    def get_card_last_4_digits(self, credit_card_account_id: str) -> str:
        """Look up the last 4 digits of a credit card number.

        Args:
            credit_card_account_id (string): The credit card account ID to look up (e.g., 'cc_76ad9cc60e_gold')

        Returns:
            Card information retrieved successfully.
        """
        refused = self._given_call("get_card_last_4_digits", credit_card_account_id=credit_card_account_id)
        if refused:
            return refused
        if not R.found(self.lookup("credit_card_accounts", "account_id", credit_card_account_id)):
            return f"Error: Credit card account '{credit_card_account_id}' not found."
        digest = hashlib.sha256(f"card_last4:{credit_card_account_id}".encode()).hexdigest()
        last4 = "".join(c for c in digest if c.isdigit())[:4].ljust(4, "0")
        shown = json.dumps({"credit_card_account_id": credit_card_account_id}, indent=2)
        return (
            f"Card information retrieved successfully.\n\nExecuted: get_card_last_4_digits\n"
            f"Arguments: {shown}\nLast 4 digits of card: {last4}"
        )

    @tool(ToolType.WRITE, discoverable=True)
    def deposit_check_3847(self, account_id: str, check_amount: float) -> str:
        """Deposit a check into a checking or savings account. The user takes a photo of the check and submits it through their mobile banking app.

        Args:
            account_id (string): The bank account ID to deposit the check into
            check_amount (number): The amount of the check in USD

        Returns:
            Check deposited successfully. Funds will be available according to your account's deposit policy.
        """
        arguments = {"account_id": account_id, "check_amount": check_amount}
        refused = self._given_call("deposit_check_3847", **arguments)
        if refused:
            return refused
        try:
            amount = float(check_amount)
        except (ValueError, TypeError):
            return f"Error: Invalid check amount '{check_amount}'. Must be a number."
        if amount <= 0:
            return "Error: Check amount must be positive."
        accounts = self.rows("accounts")
        if account_id not in accounts:
            return f"Error: Account '{account_id}' not found."
        account = accounts[account_id]
        if account.get("status") not in ("ACTIVE", "OPEN"):
            return f"Error: Account '{account_id}' is not active."
        before = R.money(account.get("current_holdings", account.get("balance", 0)))
        after = before + amount
        self.record("accounts", account_id)["current_holdings"] = f"${after:.2f}"
        return (
            f"Check deposited successfully. Funds will be available according to your account's deposit "
            f"policy.\n\nExecuted: deposit_check_3847\nArguments: {json.dumps(arguments, indent=2)}\n"
            f"Check deposit processed!\n  - Account: {account_id}\n  - Check Amount: ${amount:.2f}\n"
            f"  - Previous Balance: ${before:.2f}\n  - New Balance: ${after:.2f}"
        )

    # --- base tools ------------------------------------------------------------------------------
    @tool(ToolType.WRITE)
    def apply_for_credit_card(
        self, card_type: str, customer_name: str, annual_income: float, rho_bank_subscription: bool = False
    ) -> str:
        """Apply for a credit card.

        Args:
            card_type: Type of credit card
            customer_name: Full legal name
            annual_income: Annual income in USD
            rho_bank_subscription: Whether user has Rho-Bank+ subscription
        """
        if card_type not in CARD_TYPES:
            return f"Error: Invalid card_type '{card_type}'. Must be one of: {CARD_TYPES}"
        try:
            income = float(annual_income)  # 100000 and 100000.0 give the same id and record
        except (TypeError, ValueError):
            return "Error: Invalid annual_income. Must be a number."
        aid = R.application_id(card_type, customer_name, income, rho_bank_subscription)
        record = {
            "application_id": aid,
            "card_type": card_type,
            "customer_name": customer_name,
            "annual_income": income,
            "rho_bank_subscription": rho_bank_subscription,
            "status": "PENDING",
            "date": TODAY,
        }
        if not self.add("credit_card_applications", aid, record):
            return f"Failed to submit application: Record ID '{aid}' may already exist."
        return (
            "Credit card application submitted:\nYour application has been successfully submitted. "
            "You will receive a decision within 5-7 business days via email."
        )

    @tool(ToolType.WRITE)
    def submit_referral(self, user_id: str, account_type: str) -> str:
        """Submit a referral request to refer someone to open an account.

        Args:
            user_id: Your user ID (the referrer)
            account_type: The type of account you are referring someone to open
        """
        rid = R.referral_id(user_id, account_type)
        record = {
            "referral_id": rid,
            "referrer_id": user_id,
            "referred_account_type": account_type,
            "referral_status": "NO_PROGRESS",
            "date": TODAY,
        }
        if not self.add("referrals", rid, record):
            return f"Failed to submit referral: Record ID '{rid}' may already exist."
        return (
            f"Referral request submitted successfully!\n  - Referral ID: {rid}\n  - Referrer ID: {user_id}\n"
            f"  - Account Type: {account_type}\n  - Status: NO_PROGRESS\n  - Date: {TODAY}\n\n"
            f"Share your referral ID with the person you're referring. "
            f"They will need to use this when applying for their account."
        )

    @tool(ToolType.WRITE)
    def call_discoverable_user_tool(self, discoverable_tool_name: str, arguments: str = "{}") -> str:
        """Call a tool that was given to you by the agent.

        Use this when the agent has instructed you to perform an action using
        a discoverable tool. The agent will have told you the tool name and arguments.

        This simulates you performing the action in the real world (e.g., opening
        a webpage, navigating to a section, clicking a button).

        Args:
            discoverable_tool_name: The name of the discoverable tool to call (e.g., "open_webpage")
            arguments: JSON string of arguments for the tool (e.g., '{"url": "https://example.com"}')

        Returns:
            The result of executing the discoverable tool
        """
        spec = self.declared_tools.get(discoverable_tool_name)
        if spec is None or not spec.discoverable:
            return f"Error: Unknown discoverable tool '{discoverable_tool_name}'."
        try:
            parsed = json.loads(arguments, parse_int=float)
        except json.JSONDecodeError as exc:
            return f"Error: Invalid JSON in arguments: {exc}"
        method = getattr(self, discoverable_tool_name)
        parameters = inspect.signature(method).parameters
        for name, param in parameters.items():
            if param.default is inspect.Parameter.empty and name not in parsed:
                return f"Error: Missing required parameter: {name}"
        for name in parsed:
            if name not in parameters:
                return f"Error: Unexpected parameter: {name}"
        try:
            return method(**parsed)
        except TypeError as exc:
            return f"Error: Invalid arguments for tool '{discoverable_tool_name}': {exc}"

    @tool(ToolType.READ)
    def list_discoverable_user_tools(self) -> str:
        """List all tools that have been given to you by the agent.

        Use this to see what actions the agent has instructed you to perform.

        Returns:
            A list of tools that have been given to you
        """
        result = self.select("user_discoverable_tools", {})
        if "No results found" in result:
            return "No tools have been given to you yet by the agent."
        return f"Tools given to you by the agent:\n{result}"

    @tool(ToolType.WRITE)
    def request_human_agent_transfer(self) -> str:
        """Request to be transferred to a human agent for assistance.

        Use this when you want to speak with a real human agent instead of
        the automated system. Each request will be logged and processed.

        Returns:
            Confirmation that your transfer request has been submitted
        """
        existing = self.select("human_transfer_requests", {})
        count = 1 if not R.found(existing) else existing.count("request_id") + 1
        rid = f"transfer_request_{count}"
        self.add(
            "human_transfer_requests",
            rid,
            {"request_id": rid, "request_number": count, "requested_at": TODAY, "status": "PENDING"},
        )
        return f"Transfer request #{count} submitted.\nThe agent will process your request."

    @tool(ToolType.WRITE)
    def submit_transaction(
        self, user_id: str, credit_card_type: str, merchant_name: str, amount: float, category: str
    ) -> str:
        """Submit a credit card transaction.

        Args:
            user_id: Your user ID
            credit_card_type: Type of credit card used (e.g., "Bronze Rewards Card", "Gold Rewards Card")
            merchant_name: Name of the merchant where the purchase was made
            amount: Transaction amount in USD (e.g., 127.43)
            category: Transaction category (e.g., "Groceries", "Dining", "Travel", "Software", "Entertainment", "Utilities", "Shopping")
        """
        if credit_card_type not in REWARD_RATES:
            return f"Error: Unknown credit card type '{credit_card_type}'. Available types: {list(REWARD_RATES)}"
        tid = R.transaction_id(user_id, credit_card_type, merchant_name, amount, category)
        rates = REWARD_RATES[credit_card_type]
        rate = rates.get(category, rates["default"])
        points = int(amount * rate)
        record = {
            "transaction_id": tid,
            "user_id": user_id,
            "credit_card_type": credit_card_type,
            "merchant_name": merchant_name,
            "transaction_amount": f"${amount:.2f}",
            "transaction_date": TODAY,
            "category": category,
            "status": "COMPLETED",
            "rewards_earned": f"{points} points",
        }
        if not self.add("credit_card_transaction_history", tid, record):
            return f"Failed to submit transaction: Record ID '{tid}' may already exist."
        return (
            f"Transaction submitted successfully!\n  - Transaction ID: {tid}\n  - User ID: {user_id}\n"
            f"  - Card Type: {credit_card_type}\n  - Merchant: {merchant_name}\n  - Amount: ${amount:.2f}\n"
            f"  - Category: {category}\n  - Date: {TODAY}\n"
            f"  - Rewards Earned: {points} points ({rate}% cashback rate)\n"
        )
