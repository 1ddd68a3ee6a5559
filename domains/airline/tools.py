"""Agent tools of the airline domain (tau2 ``AirlineTools``: same names, types, errors).

The DB holds plain dicts. Tool arguments are turned into this domain's
pydantic models exactly where tau2 does it, so that validation errors and
attribute errors read the same; values that tau2 assigns without validation
are stored as given.
"""

from __future__ import annotations

import copy
from typing import Any, Optional

from pydantic import BaseModel

from tau_tui.env import Toolkit, ToolType, as_model, clone, tool

from .data_model import (
    AirportCode,
    CabinClass,
    Certificate,
    DirectFlight,
    FlightInfo,
    FlightType,
    Insurance,
    Passenger,
    Payment,
    Reservation,
    ReservationFlight,
    User,
)

# tau2's airline world is frozen at this instant (the policy says so too).
NOW = "2024-05-15T15:00:00"
# Ids handed out to new entities, first free one wins (tau2 assumes at most three per task).
NEW_RESERVATION_IDS = ("HATHAT", "HATHAU", "HATHAV")
NEW_CERTIFICATE_IDS = ("certificate_3221322", "certificate_3221323", "certificate_3221324")

AIRPORTS = (
    ("SFO", "San Francisco"),
    ("JFK", "New York"),
    ("LAX", "Los Angeles"),
    ("ORD", "Chicago"),
    ("DFW", "Dallas"),
    ("DEN", "Denver"),
    ("SEA", "Seattle"),
    ("ATL", "Atlanta"),
    ("MIA", "Miami"),
    ("BOS", "Boston"),
    ("PHX", "Phoenix"),
    ("IAH", "Houston"),
    ("LAS", "Las Vegas"),
    ("MCO", "Orlando"),
    ("EWR", "Newark"),
    ("CLT", "Charlotte"),
    ("MSP", "Minneapolis"),
    ("DTW", "Detroit"),
    ("PHL", "Philadelphia"),
    ("LGA", "LaGuardia"),
)

_CALCULATOR_CHARS = frozenset("0123456789+-*/(). ")


def _as_models(items: Any, model: type) -> Any:
    """tau2's argument coercion: a collection made only of dicts becomes a list of models.

    Anything else (a string, a mixed list, ...) is left as given; later
    attribute access then fails with Python's own wording, as in tau2.
    """
    if all(isinstance(item, dict) for item in items):
        return [model(**item) for item in items]
    return items


def _for_db(items: Any) -> Any:
    """How tau2 stores a list argument: models as their dumps, anything raw as given."""
    if isinstance(items, list):
        return [item.model_dump() if isinstance(item, BaseModel) else clone(item) for item in items]
    return clone(items)


class AirlineTools(Toolkit):
    """Book, change and cancel flight reservations of airline customers."""

    # --- lookups ------------------------------------------------------------
    def _user(self, user_id: str) -> dict[str, Any]:
        if user_id not in self.db.users:
            raise ValueError(f"User {user_id} not found")
        return self.db.users[user_id]

    def _reservation(self, reservation_id: str) -> dict[str, Any]:
        if reservation_id not in self.db.reservations:
            raise ValueError(f"Reservation {reservation_id} not found")
        return self.db.reservations[reservation_id]

    def _flight(self, flight_number: str) -> dict[str, Any]:
        if flight_number not in self.db.flights:
            raise ValueError(f"Flight {flight_number} not found")
        return self.db.flights[flight_number]

    def _flight_on(self, flight_number: str, date: str) -> dict[str, Any]:
        flight = self._flight(flight_number)
        if date not in flight["dates"]:
            raise ValueError(f"Flight {flight_number} not found on date {date}")
        return flight["dates"][date]

    def _new_reservation_id(self) -> str:
        for reservation_id in NEW_RESERVATION_IDS:
            if reservation_id not in self.db.reservations:
                return reservation_id
        raise ValueError("Too many reservations")

    def _direct_flights(
        self,
        date: str,
        origin: Optional[str] = None,
        destination: Optional[str] = None,
        leave_after: Optional[str] = None,
    ) -> list[dict[str, Any]]:
        """Flights bookable on ``date`` matching the filters, as DirectFlight dumps."""
        found = []
        for flight in self.db.flights.values():
            if origin is not None and flight["origin"] != origin:
                continue
            if destination is not None and flight["destination"] != destination:
                continue
            dates = flight["dates"]
            if date not in dates or dates[date]["status"] != "available":
                continue
            if leave_after is not None and not flight["scheduled_departure_time_est"] >= leave_after:
                continue
            day = dates[date]
            found.append(
                {
                    "flight_number": flight["flight_number"],
                    "origin": flight["origin"],
                    "destination": flight["destination"],
                    "status": "available",
                    "scheduled_departure_time_est": flight["scheduled_departure_time_est"],
                    "scheduled_arrival_time_est": flight["scheduled_arrival_time_est"],
                    "date": None,
                    "available_seats": dict(day["available_seats"]),
                    "prices": dict(day["prices"]),
                }
            )
        return found

    def _charge_for_update(self, user_id: str, payment_id: str, total_price: Any) -> Optional[Payment]:
        """Check the method, take gift-card money, and return the payment to record (None when free)."""
        methods = self.db.users[user_id]["payment_methods"]
        if payment_id not in methods:
            raise ValueError("Payment method not found")
        method = methods[payment_id]
        if method["source"] == "certificate":
            raise ValueError("Certificate cannot be used to update reservation")
        if method["source"] == "gift_card" and method["amount"] < total_price:
            raise ValueError("Gift card balance is not enough")
        if method["source"] == "gift_card":
            self.db.edit("users", user_id)["payment_methods"][payment_id]["amount"] -= total_price
        if total_price != 0:
            return Payment(payment_id=payment_id, amount=total_price)
        return None

    # --- tools ------------------------------------------------------------------
    @tool(ToolType.WRITE)
    def book_reservation(
        self,
        user_id: str,
        origin: str,
        destination: str,
        flight_type: FlightType,
        cabin: CabinClass,
        flights: list[FlightInfo | dict],
        passengers: list[Passenger | dict],
        payment_methods: list[Payment | dict],
        total_baggages: int,
        nonfree_baggages: int,
        insurance: Insurance,
    ) -> Reservation:
        """Create a new reservation for a user and charge its full price to the given payment methods.

        Args:
            user_id: Id of the user making the booking, such as 'sara_doe_496'.
            origin: IATA code of the airport where the trip starts, such as 'SFO'.
            destination: IATA code of the airport where the trip ends, such as 'JFK'.
            flight_type: Either 'one_way' or 'round_trip'.
            cabin: Cabin class for all passengers: 'basic_economy', 'economy' or 'business'.
            flights: Every flight segment of the trip, each with its flight number and date.
            passengers: Every traveller, each with first name, last name and date of birth.
            payment_methods: How the total is paid: each entry names a payment method saved in the user's
                profile and the amount charged to it; the amounts must add up to the total price.
            total_baggages: Number of checked bags in total.
            nonfree_baggages: Number of checked bags that must be paid for.
            insurance: 'yes' to add travel insurance, 'no' otherwise.
        """
        flights = _as_models(flights, FlightInfo)
        passengers = _as_models(passengers, Passenger)
        payment_methods = _as_models(payment_methods, Payment)
        user = self._user(user_id)
        reservation_id = self._new_reservation_id()
        reservation = Reservation(
            reservation_id=reservation_id,
            user_id=user_id,
            origin=origin,
            destination=destination,
            flight_type=flight_type,
            cabin=cabin,
            flights=[],
            passengers=copy.deepcopy(passengers),
            payment_history=copy.deepcopy(payment_methods),
            created_at=NOW,
            total_baggages=total_baggages,
            nonfree_baggages=nonfree_baggages,
            insurance=insurance,
        )

        total_price = 0
        booked_days: list[tuple[str, str]] = []
        for flight_info in flights:
            flight_number = flight_info.flight_number
            flight = self._flight(flight_number)
            day = self._flight_on(flight_number, flight_info.date)
            if day["status"] != "available":
                raise ValueError(f"Flight {flight_number} not available on date {flight_info.date}")
            if day["available_seats"][cabin] < len(passengers):
                raise ValueError(f"Not enough seats on flight {flight_number}")
            price = day["prices"][cabin]
            reservation.flights.append(
                ReservationFlight(
                    origin=flight["origin"],
                    destination=flight["destination"],
                    flight_number=flight_number,
                    date=flight_info.date,
                    price=price,
                )
            )
            booked_days.append((flight_number, flight_info.date))
            total_price += price * len(passengers)

        if insurance == "yes":
            total_price += 30 * len(passengers)
        total_price += 50 * nonfree_baggages

        methods = user["payment_methods"]
        for payment in payment_methods:
            payment_id = payment.payment_id
            amount = payment.amount
            if payment_id not in methods:
                raise ValueError(f"Payment method {payment_id} not found")
            method = methods[payment_id]
            if method["source"] in {"gift_card", "certificate"} and method["amount"] < amount:
                raise ValueError(f"Not enough balance in payment method {payment_id}")

        total_payment = sum(payment.amount for payment in payment_methods)
        if total_payment != total_price:
            raise ValueError(f"Payment amount does not add up, total price is {total_price}, but paid {total_payment}")

        if payment_methods:
            own_methods = self.db.edit("users", user_id)["payment_methods"]
            for payment in payment_methods:
                method = own_methods[payment.payment_id]  # KeyError if a spent certificate is named twice
                if method["source"] == "gift_card":
                    method["amount"] -= payment.amount
                elif method["source"] == "certificate":
                    own_methods.pop(payment.payment_id)

        for flight_number, date in booked_days:
            self.db.edit("flights", flight_number, "dates", date)["available_seats"][cabin] -= len(passengers)
        entity = reservation.model_dump()
        self.db.set("reservations", reservation_id, entity)
        self.db.edit("users", user_id)["reservations"].append(reservation_id)
        return as_model(entity)

    @tool(ToolType.GENERIC)
    def calculate(self, expression: str) -> str:
        """Evaluate an arithmetic expression and return the result rounded to two decimals.

        Args:
            expression: The expression to evaluate, such as '2 + 2'. Only digits, '+', '-', '*', '/',
                parentheses, decimal points and spaces are allowed.
        """
        if not all(char in _CALCULATOR_CHARS for char in expression):
            raise ValueError("Invalid characters in expression")
        # Only arithmetic characters get here, and no builtins are reachable.
        value = eval(expression, {"__builtins__": None}, {})  # noqa: S307
        return str(round(float(value), 2))

    @tool(ToolType.WRITE)
    def cancel_reservation(self, reservation_id: str) -> Reservation:
        """Cancel a whole reservation and refund every payment made for it.

        Args:
            reservation_id: Id of the reservation to cancel, such as 'ZFA04Y'.
        """
        self._reservation(reservation_id)
        reservation = self.db.edit("reservations", reservation_id)
        refunds = [
            Payment(payment_id=payment["payment_id"], amount=-payment["amount"]).model_dump()
            for payment in reservation["payment_history"]
        ]
        reservation["payment_history"].extend(refunds)
        reservation["status"] = "cancelled"
        return as_model(reservation)

    @tool(ToolType.READ)
    def get_reservation_details(self, reservation_id: str) -> Reservation:
        """Look up a reservation: flights, passengers, payments, baggage, insurance and status.

        Args:
            reservation_id: Id of the reservation, such as '8JX2WO'.
        """
        return as_model(self._reservation(reservation_id))

    @tool(ToolType.READ)
    def get_user_details(self, user_id: str) -> User:
        """Look up a user's profile: name, contact, membership, saved payment methods and reservation ids.

        Args:
            user_id: Id of the user, such as 'sara_doe_496'.
        """
        return as_model(self._user(user_id))

    @tool(ToolType.READ)
    def list_all_airports(self) -> list[AirportCode]:
        """List every airport served, with its IATA code and city."""
        return [as_model({"iata": iata, "city": city}) for iata, city in AIRPORTS]

    @tool(ToolType.READ)
    def search_direct_flight(self, origin: str, destination: str, date: str) -> list[DirectFlight]:
        """Find the nonstop flights between two airports that can still be booked on a date.

        Args:
            origin: IATA code of the departure airport, such as 'JFK'.
            destination: IATA code of the arrival airport, such as 'LAX'.
            date: Travel date as YYYY-MM-DD, such as '2024-05-01'.
        """
        return [as_model(f) for f in self._direct_flights(date, origin=origin, destination=destination)]

    @tool(ToolType.READ)
    def search_onestop_flight(
        self, origin: str, destination: str, date: str
    ) -> list[tuple[DirectFlight, DirectFlight]]:
        """Find bookable connections with exactly one stop between two airports, leaving on a date.

        Args:
            origin: IATA code of the departure airport, such as 'JFK'.
            destination: IATA code of the final arrival airport, such as 'LAX'.
            date: Departure date of the first leg as YYYY-MM-DD, such as '2024-05-01'.
        """
        pairs = []
        for first in self._direct_flights(date, origin=origin):
            first["date"] = date
            arrival = first["scheduled_arrival_time_est"]
            # tau2 builds the next day's date this way (May only, no zero padding).
            second_date = f"2024-05-{int(date[-2:]) + 1}" if "+1" in arrival else date
            for second in self._direct_flights(
                second_date, origin=first["destination"], destination=destination, leave_after=arrival
            ):
                second["date"] = second_date
                pairs.append([as_model(first), as_model(second)])
        return pairs

    @tool(ToolType.WRITE)
    def send_certificate(self, user_id: str, amount: int) -> str:
        """Give a user a travel certificate worth the given amount (only when the policy allows it).

        Args:
            user_id: Id of the user who receives the certificate, such as 'sara_doe_496'.
            amount: Value of the certificate in dollars.
        """
        user = self._user(user_id)
        for payment_id in NEW_CERTIFICATE_IDS:
            if payment_id not in user["payment_methods"]:
                certificate = Certificate(id=payment_id, amount=amount, source="certificate").model_dump()
                self.db.edit("users", user_id)["payment_methods"][payment_id] = certificate
                return f"Certificate {payment_id} added to user {user_id} with amount {amount}."
        raise ValueError("Too many certificates")

    @tool(ToolType.GENERIC)
    def transfer_to_human_agents(self, summary: str) -> str:
        """Hand the conversation over to a human agent, passing a summary of the user's issue.

        Use it only when the user explicitly asks for a human agent, or when the policy and the
        available tools cannot resolve the user's issue.

        Args:
            summary: A short summary of the user's issue for the human agent.
        """
        return "Transfer successful"

    @tool(ToolType.WRITE)
    def update_reservation_baggages(
        self,
        reservation_id: str,
        total_baggages: int,
        nonfree_baggages: int,
        payment_id: str,
    ) -> Reservation:
        """Change the number of checked bags on a reservation, charging any extra paid bags.

        Args:
            reservation_id: Id of the reservation, such as 'ZFA04Y'.
            total_baggages: New total number of checked bags on the reservation.
            nonfree_baggages: New number of checked bags that must be paid for.
            payment_id: Id of a payment method saved in the user's profile, such as 'credit_card_7815826'
                or 'gift_card_7815826'; certificates cannot be used.
        """
        reservation = self._reservation(reservation_id)
        user_id = reservation["user_id"]
        self._user(user_id)
        total_price = 50 * max(0, nonfree_baggages - reservation["nonfree_baggages"])
        payment = self._charge_for_update(user_id, payment_id, total_price)
        reservation = self.db.edit("reservations", reservation_id)
        if payment is not None:
            reservation["payment_history"].append(payment.model_dump())
        reservation["total_baggages"] = clone(total_baggages)
        reservation["nonfree_baggages"] = clone(nonfree_baggages)
        return as_model(reservation)

    @tool(ToolType.WRITE)
    def update_reservation_flights(
        self,
        reservation_id: str,
        cabin: CabinClass,
        flights: list[FlightInfo | dict],
        payment_id: str,
    ) -> Reservation:
        """Replace the flights (and cabin) of a reservation, charging or refunding the price difference.

        Args:
            reservation_id: Id of the reservation, such as 'ZFA04Y'.
            cabin: Cabin class for the whole reservation after the change.
            flights: Every flight segment of the updated reservation, each with its flight number and date,
                including segments that do not change.
            payment_id: Id of a payment method saved in the user's profile, such as 'credit_card_7815826'
                or 'gift_card_7815826'; certificates cannot be used.
        """
        flights = _as_models(flights, FlightInfo)
        reservation = self._reservation(reservation_id)
        user_id = reservation["user_id"]
        self._user(user_id)
        travellers = len(reservation["passengers"])

        total_price = 0
        new_flights = []
        for flight_info in flights:
            kept = next(
                (
                    segment
                    for segment in reservation["flights"]
                    if segment["flight_number"] == flight_info.flight_number
                    and segment["date"] == flight_info.date
                    and cabin == reservation["cabin"]
                ),
                None,
            )
            if kept:
                total_price += kept["price"] * travellers
                new_flights.append(kept)
                continue
            flight = self._flight(flight_info.flight_number)
            day = self._flight_on(flight_info.flight_number, flight_info.date)
            if day["status"] != "available":
                raise ValueError(f"Flight {flight_info.flight_number} not available on date {flight_info.date}")
            if day["available_seats"][cabin] < travellers:
                raise ValueError(f"Not enough seats on flight {flight_info.flight_number}")
            segment = ReservationFlight(
                flight_number=flight_info.flight_number,
                date=flight_info.date,
                price=day["prices"][cabin],
                origin=flight["origin"],
                destination=flight["destination"],
            )
            total_price += segment.price * travellers
            new_flights.append(segment.model_dump())

        total_price -= sum(segment["price"] for segment in reservation["flights"]) * travellers

        payment = self._charge_for_update(user_id, payment_id, total_price)
        reservation = self.db.edit("reservations", reservation_id)
        if payment is not None:
            reservation["payment_history"].append(payment.model_dump())
        reservation["flights"] = clone(new_flights)
        reservation["cabin"] = clone(cabin)
        # Seat counts are left alone here, as in tau2.
        return as_model(reservation)

    @tool(ToolType.WRITE)
    def update_reservation_passengers(self, reservation_id: str, passengers: list[Passenger | dict]) -> Reservation:
        """Replace the passenger details of a reservation; the number of passengers cannot change.

        Args:
            reservation_id: Id of the reservation, such as 'ZFA04Y'.
            passengers: Every passenger of the reservation, each with first name, last name and date of
                birth, in the same number as before.
        """
        passengers = _as_models(passengers, Passenger)
        reservation = self._reservation(reservation_id)
        if len(passengers) != len(reservation["passengers"]):
            raise ValueError("Number of passengers does not match")
        reservation = self.db.edit("reservations", reservation_id)
        reservation["passengers"] = _for_db(passengers)
        return as_model(reservation)

    @tool(ToolType.READ)
    def get_flight_status(self, flight_number: str, date: str) -> str:
        """Tell the status of a flight on a date: available, on time, delayed, flying, landed or cancelled.

        Args:
            flight_number: The flight number, such as 'HAT001'.
            date: Date of the flight as YYYY-MM-DD.
        """
        return self._flight_on(flight_number, date)["status"]
