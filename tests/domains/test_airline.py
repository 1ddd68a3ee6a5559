"""The airline domain: tau2's tool behaviour, DB sharing between episodes, and oracle agreement.

Expected texts below were produced by tau2 1.0.1's own airline toolkit on the
pristine DB. Pydantic's "For further information visit .../2.NN/..." suffix
depends on the installed pydantic, so validation errors are compared up to it.
"""

from __future__ import annotations

import copy
import json
import sys
from typing import TYPE_CHECKING, Any

import pytest

from tau_tui.env import ToolType
from tau_tui.model.messages import ToolCall
from tests.evaluate.test_oracle_agreement import agreement

if TYPE_CHECKING:
    from pathlib import Path

    from tau_tui.analysis import Analyzer
    from tau_tui.domains import DomainRegistry
    from tau_tui.env.domain import Domain
    from tau_tui.env.environment import Environment

PRISTINE_HASH = "124e39a664b56402bcd09cb8a6a9cece6acb8462337c969799d5658e3250f263"

MIA_BOOKING = {
    "user_id": "mia_li_3668",
    "origin": "JFK",
    "destination": "MIA",
    "flight_type": "one_way",
    "cabin": "economy",
    "flights": [{"flight_number": "HAT014", "date": "2024-05-20"}],
    "passengers": [{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}],
    "payment_methods": [
        {"payment_id": "certificate_4856383", "amount": 100},
        {"payment_id": "credit_card_4421486", "amount": 123},
    ],
    "total_baggages": 1,
    "nonfree_baggages": 1,
    "insurance": "yes",
}

# 143 (economy fare) + 30 (insurance) + 50 (one paid bag), paid 100 by certificate and 123 by card.
MIA_BOOKING_RESULT = (
    '{"reservation_id": "HATHAT", "user_id": "mia_li_3668", "origin": "JFK", "destination": "MIA", '
    '"flight_type": "one_way", "cabin": "economy", "flights": [{"flight_number": "HAT014", "origin": "JFK", '
    '"destination": "MIA", "date": "2024-05-20", "price": 143}], "passengers": [{"first_name": "Mia", '
    '"last_name": "Li", "dob": "1990-04-05"}], "payment_history": [{"payment_id": "certificate_4856383", '
    '"amount": 100}, {"payment_id": "credit_card_4421486", "amount": 123}], "created_at": "2024-05-15T15:00:00", '
    '"total_baggages": 1, "nonfree_baggages": 1, "insurance": "yes", "status": null}'
)

TAU2_TOOLS = {
    "book_reservation": (ToolType.WRITE, True),
    "calculate": (ToolType.GENERIC, False),
    "cancel_reservation": (ToolType.WRITE, True),
    "get_flight_status": (ToolType.READ, False),
    "get_reservation_details": (ToolType.READ, False),
    "get_user_details": (ToolType.READ, False),
    "list_all_airports": (ToolType.READ, False),
    "search_direct_flight": (ToolType.READ, False),
    "search_onestop_flight": (ToolType.READ, False),
    "send_certificate": (ToolType.WRITE, True),
    "transfer_to_human_agents": (ToolType.GENERIC, False),
    "update_reservation_baggages": (ToolType.WRITE, True),
    "update_reservation_flights": (ToolType.WRITE, True),
    "update_reservation_passengers": (ToolType.WRITE, True),
}


@pytest.fixture(scope="module")
def domain(registry: DomainRegistry) -> Domain:
    return registry.get("airline")


@pytest.fixture
def env(domain: Domain) -> Environment:
    return domain.new_environment()


def call(env: Environment, name: str, **arguments: Any) -> tuple[Any, bool]:
    """Run a tool call the way a recorded assistant call runs: (content text, error flag)."""
    message = env.call(ToolCall(id="c1", name=name, arguments=arguments))
    return message.content, message.error


def strip_pydantic_url(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if "errors.pydantic.dev" not in line)


# --- pristine DB sharing --------------------------------------------------------


def test_pristine_db_is_loaded_once_and_shared(domain: Domain, monkeypatch: pytest.MonkeyPatch) -> None:
    first = domain.new_environment()
    module = sys.modules[type(domain).__module__]
    reads: list[Path] = []
    original = module.read_data_file

    def counted(path: Path) -> Any:
        reads.append(path)
        return original(path)

    monkeypatch.setattr(module, "read_data_file", counted)
    second = domain.new_environment()
    third = domain.new_environment()
    assert reads == []
    assert second.agent is not None
    assert second.agent.db is not None
    assert first.agent is not None
    assert first.agent.db is not None
    assert second.agent.db.root is first.agent.db.root
    assert third.agent is not None
    assert third.agent.db is not None
    assert third.agent.db.root is first.agent.db.root
    assert first.db_hash() == PRISTINE_HASH
    assert first.user is None and first.user_db_hash() is None


def test_solo_mode_is_refused(domain: Domain) -> None:
    with pytest.raises(ValueError, match="Airline domain does not support solo mode"):
        domain.new_environment(solo=True)


def test_writes_never_touch_the_shared_pristine_tree(domain: Domain) -> None:
    env = domain.new_environment()
    assert env.agent is not None
    assert env.agent.db is not None
    pristine = env.agent.db.root
    touched = {
        "user": copy.deepcopy(pristine["users"]["mia_li_3668"]),
        "reservation": copy.deepcopy(pristine["reservations"]["NO6JO3"]),
        "other_reservation": copy.deepcopy(pristine["reservations"]["AIXC49"]),
        "flight": copy.deepcopy(pristine["flights"]["HAT014"]),
    }
    assert call(env, "book_reservation", **MIA_BOOKING) == (MIA_BOOKING_RESULT, False)
    assert not call(env, "send_certificate", user_id="mia_li_3668", amount=150)[1]
    assert not call(
        env,
        "update_reservation_baggages",
        reservation_id="NO6JO3",
        total_baggages=4,
        nonfree_baggages=2,
        payment_id="credit_card_4421486",
    )[1]
    assert not call(
        env,
        "update_reservation_passengers",
        reservation_id="NO6JO3",
        passengers=[{"first_name": "Ann", "last_name": "Li", "dob": "1991-01-01"}],
    )[1]
    assert not call(
        env,
        "update_reservation_flights",
        reservation_id="AIXC49",
        cabin="business",
        flights=[{"flight_number": "HAT014", "date": "2024-05-20"}],
        payment_id="credit_card_4421486",
    )[1]
    assert not call(env, "cancel_reservation", reservation_id="NO6JO3")[1]
    assert env.db_hash() != PRISTINE_HASH

    assert pristine["users"]["mia_li_3668"] == touched["user"]
    assert pristine["reservations"]["NO6JO3"] == touched["reservation"]
    assert pristine["reservations"]["AIXC49"] == touched["other_reservation"]
    assert pristine["flights"]["HAT014"] == touched["flight"]
    assert "HATHAT" not in pristine["reservations"]
    other = domain.new_environment()
    assert other.db_hash() == PRISTINE_HASH
    assert call(other, "get_flight_status", flight_number="HAT014", date="2024-05-20") == ("available", False)
    seats = json.loads(call(other, "search_direct_flight", origin="JFK", destination="MIA", date="2024-05-20")[0])
    assert seats[0]["available_seats"] == {"basic_economy": 3, "economy": 9, "business": 9}


# --- tools: exact outputs and errors ------------------------------------------------


def test_tool_types_and_mutating_flags_match_tau2(env: Environment) -> None:
    kit = env.agent
    assert kit is not None
    assert type(kit).__name__ == "AirlineTools"
    assert {name: (spec.type, spec.mutates_state) for name, spec in kit.declared_tools.items()} == TAU2_TOOLS
    for name, (_, mutates) in TAU2_TOOLS.items():
        assert env.mutates(name) is mutates


def test_book_reservation_output_and_effects(env: Environment) -> None:
    assert call(env, "book_reservation", **MIA_BOOKING) == (MIA_BOOKING_RESULT, False)
    user = json.loads(call(env, "get_user_details", user_id="mia_li_3668")[0])
    assert user["reservations"] == ["NO6JO3", "AIXC49", "HKEG34", "HATHAT"]
    assert "certificate_4856383" not in user["payment_methods"]  # a certificate is used up whole
    flights = json.loads(call(env, "search_direct_flight", origin="JFK", destination="MIA", date="2024-05-20")[0])
    assert flights[0]["flight_number"] == "HAT014"
    assert flights[0]["available_seats"]["economy"] == 8
    # The spent certificate cannot pay again.
    assert call(env, "book_reservation", **MIA_BOOKING) == ("Error: Payment method certificate_4856383 not found", True)


def test_new_reservation_ids_are_the_first_free_of_three(env: Environment) -> None:
    booking = dict(
        MIA_BOOKING,
        insurance="no",
        nonfree_baggages=0,
        payment_methods=[{"payment_id": "credit_card_4421486", "amount": 143}],
    )
    ids = [json.loads(call(env, "book_reservation", **booking)[0])["reservation_id"] for _ in range(3)]
    assert ids == ["HATHAT", "HATHAU", "HATHAV"]
    assert call(env, "book_reservation", **booking) == ("Error: Too many reservations", True)
    reservation = json.loads(call(env, "get_reservation_details", reservation_id="HATHAU")[0])
    assert reservation["created_at"] == "2024-05-15T15:00:00"


def test_certificate_ids_and_plain_text_results(env: Environment) -> None:
    messages = [call(env, "send_certificate", user_id="mia_li_3668", amount=100) for _ in range(4)]
    assert messages == [
        ("Certificate certificate_3221322 added to user mia_li_3668 with amount 100.", False),
        ("Certificate certificate_3221323 added to user mia_li_3668 with amount 100.", False),
        ("Certificate certificate_3221324 added to user mia_li_3668 with amount 100.", False),
        ("Error: Too many certificates", True),
    ]
    user = json.loads(call(env, "get_user_details", user_id="mia_li_3668")[0])
    # Stored through the Certificate model: the amount becomes a float, as in tau2.
    assert user["payment_methods"]["certificate_3221322"] == {
        "source": "certificate",
        "id": "certificate_3221322",
        "amount": 100.0,
    }
    assert call(env, "transfer_to_human_agents", summary="x") == ("Transfer successful", False)
    assert call(env, "calculate", expression="(143 + 30) * 2 / 3") == ("115.33", False)
    assert call(env, "calculate", expression="import os") == ("Error: Invalid characters in expression", True)


def test_model_results_keep_numbers_inside_lists(env: Environment) -> None:
    text, error = call(env, "search_onestop_flight", origin="JFK", destination="DEN", date="2024-05-20")
    assert not error
    pairs = json.loads(text)
    assert len(pairs) == 7
    legs = [(a["flight_number"], a["date"], b["flight_number"], b["date"]) for a, b in pairs]
    assert ("HAT261", "2024-05-20", "HAT049", "2024-05-21") in legs  # arrival "+1": next day's leg
    assert pairs[0][0]["prices"]["economy"] == 143  # a number, not "143"
    airports = json.loads(call(env, "list_all_airports")[0])
    assert len(airports) == 20 and airports[0] == {"iata": "SFO", "city": "San Francisco"}


def test_unvalidated_assignments_are_stored_as_given(env: Environment) -> None:
    text, _ = call(
        env,
        "update_reservation_baggages",
        reservation_id="NO6JO3",
        total_baggages="3",
        nonfree_baggages=0,
        payment_id="credit_card_4421486",
    )
    assert json.loads(text)["total_baggages"] == "3"
    text, _ = call(
        env,
        "update_reservation_baggages",
        reservation_id="NO6JO3",
        total_baggages=3,
        nonfree_baggages=1.0,
        payment_id="credit_card_4421486",
    )
    result = json.loads(text)
    assert (result["total_baggages"], result["nonfree_baggages"]) == (3, 1.0)
    assert result["payment_history"][-1] == {"payment_id": "credit_card_4421486", "amount": 50}
    text, _ = call(
        env,
        "update_reservation_flights",
        reservation_id="AIXC49",
        cabin="first",
        flights=[],
        payment_id="credit_card_4421486",
    )
    result = json.loads(text)
    assert (result["cabin"], result["flights"]) == ("first", [])
    assert result["payment_history"] == [
        {"payment_id": "credit_card_4421486", "amount": 123},
        {"payment_id": "credit_card_4421486", "amount": -123},
    ]


def test_error_texts_match_tau2(env: Environment) -> None:
    assert call(env, "get_user_details", user_id="nobody") == ("Error: User nobody not found", True)
    assert call(env, "cancel_reservation", reservation_id="ZZZ") == ("Error: Reservation ZZZ not found", True)
    assert call(env, "get_flight_status", flight_number="HAT014", date="2024-06-01") == (
        "Error: Flight HAT014 not found on date 2024-06-01",
        True,
    )
    assert call(env, "book_reservation", user_id="mia_li_3668") == (
        "Error: AirlineTools.book_reservation() missing 10 required positional arguments: 'origin', "
        "'destination', 'flight_type', 'cabin', 'flights', 'passengers', 'payment_methods', 'total_baggages', "
        "'nonfree_baggages', and 'insurance'",
        True,
    )
    text, error = call(
        env,
        "update_reservation_passengers",
        reservation_id="NO6JO3",
        passengers=[{"first_name": "Mia", "last_name": "Li"}],
    )
    assert error
    assert strip_pydantic_url(text) == (
        "Error: 1 validation error for Passenger\ndob\n  Field required [type=missing, "
        "input_value={'first_name': 'Mia', 'last_name': 'Li'}, input_type=dict]"
    )
    assert call(
        env,
        "update_reservation_flights",
        reservation_id="NO6JO3",
        cabin="first",
        flights=[{"flight_number": "HAT014", "date": "2024-05-20"}],
        payment_id="credit_card_4421486",
    ) == ("Error: 'first'", True)
    assert call(
        env,
        "update_reservation_baggages",
        reservation_id="NO6JO3",
        total_baggages=1,
        nonfree_baggages=1,
        payment_id="certificate_4856383",
    ) == ("Error: Certificate cannot be used to update reservation", True)
    assert env.db_hash() == PRISTINE_HASH


def test_failing_booking_keeps_tau2s_partial_effects(env: Environment) -> None:
    # Naming one certificate twice passes the balance checks, then fails while spending it:
    # the certificate is gone, yet no reservation is made and no seat is taken (as in tau2).
    booking = dict(
        MIA_BOOKING,
        payment_methods=[
            {"payment_id": "certificate_4856383", "amount": 100},
            {"payment_id": "certificate_4856383", "amount": 100},
            {"payment_id": "credit_card_4421486", "amount": 23},
        ],
    )
    assert call(env, "book_reservation", **booking) == ("Error: 'certificate_4856383'", True)
    user = json.loads(call(env, "get_user_details", user_id="mia_li_3668")[0])
    assert list(user["payment_methods"]) == ["credit_card_4421486", "certificate_7504069", "credit_card_1955700"]
    assert user["reservations"] == ["NO6JO3", "AIXC49", "HKEG34"]
    assert call(env, "get_reservation_details", reservation_id="HATHAT") == (
        "Error: Reservation HATHAT not found",
        True,
    )
    flights = json.loads(call(env, "search_direct_flight", origin="JFK", destination="MIA", date="2024-05-20")[0])
    assert flights[0]["available_seats"]["economy"] == 9


# --- agreement with tau2 1.0.1 (ORACLE.jsonl) ----------------------------------------


def test_oracle_agreement_airline(
    oracle_rows: list[dict[str, Any]], analyzer: Analyzer, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every airline simulation, with the corpus data folder as it is (tau2 1.0.1's tasks and DB).

    The adaptive-agent run embeds no tasks, so its 50 simulations take their
    task definitions from ``domains/airline/tasks.json``; the other files embed
    their own.
    """
    agree, total, problems = agreement("airline", oracle_rows, analyzer)
    with capsys.disabled():
        counts = ", ".join(f"{f} {n}/{total}" for f, n in agree.items())
        print(f"\n[oracle] airline: {total} simulations; {counts}")
    assert total > 0
    assert not problems, "\n".join(problems[:20])
