"""What airline's data model promises after every write (``tau_tui.env.invariants``).

- a reservation's payments cover its price (segments × passengers, insurance, paid bags), and come to
  nothing once it is cancelled (paid bags dropped later are not refunded, so more is allowed);
- every segment of a reservation is a flight on that date, on that route;
- a reservation's user exists and lists it;
- no gift card or certificate is worth less than nothing, and no flight has fewer than no free seats.
"""

from __future__ import annotations

from typing import Any, Iterator

from tau_tui.env.invariants import Scope, Violation, entities

CENT = 0.01
INSURANCE, BAG = 30, 50


def price_of(reservation: dict[str, Any]) -> float:
    travellers = len(reservation["passengers"])
    price = sum(segment["price"] for segment in reservation["flights"]) * travellers
    if reservation.get("insurance") == "yes":
        price += INSURANCE * travellers
    return float(price + BAG * reservation["nonfree_baggages"])


def payments_cover_price(db: Any, scope: Scope) -> Iterator[Violation]:
    for reservation_id, reservation in entities(db, "reservations", scope):
        paid = sum(payment["amount"] for payment in reservation["payment_history"])
        where = f"reservations.{reservation_id}.payment_history"
        if reservation.get("status") == "cancelled":
            if abs(paid) > CENT:
                yield Violation(where, f"a cancelled reservation keeps {paid:.2f} paid")
        elif paid < price_of(reservation) - CENT:
            yield Violation(where, f"payments come to {paid:.2f}, the reservation costs {price_of(reservation):.2f}")


def segments_exist(db: Any, scope: Scope) -> Iterator[Violation]:
    flights = db["flights"]
    for reservation_id, reservation in entities(db, "reservations", scope):
        for index, segment in enumerate(reservation["flights"]):
            number = segment["flight_number"]
            flight = flights[number] if number in flights else None
            where = f"reservations.{reservation_id}.flights[{index}]"
            if flight is None or segment["date"] not in flight["dates"]:
                yield Violation(where, f"no flight {number} on {segment['date']}")
            elif (flight["origin"], flight["destination"]) != (segment["origin"], segment["destination"]):
                yield Violation(where, f"flight {number} flies {flight['origin']}-{flight['destination']}")


def owner_lists_reservation(db: Any, scope: Scope) -> Iterator[Violation]:
    users = db["users"]
    for reservation_id, reservation in entities(db, "reservations", scope):
        user = users[reservation["user_id"]] if reservation["user_id"] in users else None
        if user is None or reservation_id not in user["reservations"]:
            yield Violation(f"reservations.{reservation_id}", f"user {reservation['user_id']} does not list it")


def balances_not_negative(db: Any, scope: Scope) -> Iterator[Violation]:
    for user_id, user in entities(db, "users", scope):
        for method_id, method in user["payment_methods"].items():
            if method.get("source") in ("gift_card", "certificate") and method.get("amount", 0) < 0:
                yield Violation(f"users.{user_id}.payment_methods.{method_id}", f"amount {method['amount']} < 0")


def seats_not_negative(db: Any, scope: Scope) -> Iterator[Violation]:
    for number, flight in entities(db, "flights", scope):
        for date, day in flight["dates"].items():
            for cabin, seats in (day.get("available_seats") or {}).items():
                if seats < 0:
                    yield Violation(f"flights.{number}.dates.{date}.available_seats.{cabin}", f"{seats} seats")
