"""Tool schemas from signatures and Google-style docstrings."""

from __future__ import annotations

from typing import Any, Literal, Optional

import pytest
from pydantic import BaseModel

from tau_tui.env import Toolkit, ToolType, tool
from tau_tui.env.domain import Domain
from tau_tui.env.tool_schema import function_schema, parse_docstring, tool_schema, toolkit_schemas


class Passenger(BaseModel):
    first_name: str
    dob: str


class Kit(Toolkit):
    @tool(ToolType.WRITE)
    def book(
        self,
        user_id: str,
        cabin: Literal["economy", "business"],
        passengers: list[Passenger],
        extras: dict[str, int],
        note: Optional[str] = None,
        count: int = 1,
    ) -> dict[str, Any]:  # noqa: UP045 - Optional on purpose
        """Book a trip for a user.

        Charges the saved payment method.
        Never books twice.

        Args:
            user_id: The user's id, such as 'sara_1'.
            cabin (str): The cabin class.
            passengers: Everyone travelling: first name
                and date of birth.
            extras: Extra items by name.
            note: Free text.

        Returns:
            The reservation.
        """
        return {}

    # x unannotated on purpose: the schema of such a parameter is what test_undocumented_tool... checks
    @tool(ToolType.READ)
    def undocumented(self, x, y: float = 2.5):  # type: ignore[no-untyped-def]
        return x

    @tool(ToolType.READ, discoverable=True)
    def hidden(self) -> str:
        """A tool found in the documents."""
        return ""

    def helper_not_a_tool(self) -> None:
        """Never listed."""


def test_docstring_parts_follow_google_style() -> None:
    doc = parse_docstring(Kit.book.__doc__)
    assert doc.summary == "Book a trip for a user."
    assert doc.details == "Charges the saved payment method.\nNever books twice."
    assert doc.description == "Book a trip for a user.\n\nCharges the saved payment method.\nNever books twice."
    assert doc.params["cabin"] == "The cabin class."
    assert doc.params["passengers"] == "Everyone travelling: first name\nand date of birth."
    assert doc.returns == "The reservation."


def test_schema_types_descriptions_and_required() -> None:
    schema = tool_schema(Kit(), "book")
    assert schema["type"] == "function"
    function = schema["function"]
    assert function["name"] == "book"
    assert function["description"].startswith("Book a trip for a user.\n\n")
    params = function["parameters"]
    assert params["title"] == "parameters"
    props = params["properties"]
    assert params["required"] == ["user_id", "cabin", "passengers", "extras"]
    assert props["user_id"] == {"description": "The user's id, such as 'sara_1'.", "title": "User Id", "type": "string"}
    assert props["cabin"]["enum"] == ["economy", "business"]
    assert props["passengers"]["items"] == {"$ref": "#/$defs/Passenger"}
    assert set(params["$defs"]["Passenger"]["properties"]) == {"first_name", "dob"}
    assert props["extras"]["additionalProperties"] == {"type": "integer"}
    assert props["note"]["anyOf"] == [{"type": "string"}, {"type": "null"}]
    assert props["note"]["default"] is None
    assert props["count"] == {"default": 1, "title": "Count", "type": "integer"}


def test_undocumented_tool_gets_its_name_and_any_types() -> None:
    function = tool_schema(Kit(), "undocumented")["function"]
    assert function["description"] == "undocumented"
    assert function["parameters"]["properties"]["x"] == {"title": "X"}
    assert function["parameters"]["required"] == ["x"]


def test_discoverable_tools_and_helpers_are_not_listed_by_default() -> None:
    names = [s["function"]["name"] for s in toolkit_schemas(Kit())]
    assert names == ["book", "undocumented"]
    with_hidden = [s["function"]["name"] for s in toolkit_schemas(Kit(), include_discoverable=True)]
    assert "hidden" in with_hidden and "helper_not_a_tool" not in with_hidden


def test_include_filters_like_task_user_tools() -> None:
    assert [s["function"]["name"] for s in toolkit_schemas(Kit(), include=["undocumented"])] == ["undocumented"]
    assert toolkit_schemas(Kit(), include=[]) == []
    assert toolkit_schemas(None) == []


def test_schemas_are_private_copies() -> None:
    first = tool_schema(Kit(), "book")
    first["function"]["parameters"]["properties"].clear()
    assert tool_schema(Kit(), "book")["function"]["parameters"]["properties"]


def test_unknown_tool_is_refused() -> None:
    with pytest.raises(ValueError, match="not found"):
        tool_schema(Kit(), "helper_not_a_tool")


def test_function_schema_of_a_plain_function() -> None:
    def done() -> str:
        """Finish."""
        return ""

    assert function_schema(done)["function"] == {
        "name": "done",
        "description": "Finish.",
        "parameters": {"properties": {}, "title": "parameters", "type": "object"},
    }


def test_mock_domain_schemas(mock_domain: Domain) -> None:
    env = mock_domain.new_environment()
    agent = {s["function"]["name"]: s for s in toolkit_schemas(env.agent)}
    assert list(agent) == ["create_task", "get_users", "update_task_status", "transfer_to_human_agents"]
    create = agent["create_task"]["function"]["parameters"]
    assert create["required"] == ["user_id", "title"]
    assert create["properties"]["description"]["description"] == "Optional description of the task"
    user = [s["function"]["name"] for s in toolkit_schemas(env.user)]
    assert user == ["check_notifications", "dismiss_notification"]
