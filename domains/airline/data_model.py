"""Airline domain data, shaped like tau2's so that validation, defaults and hashes agree.

Class names, field names, types, defaults and configs follow tau2's airline
data model exactly: validation errors name these classes, and the DB hash is
computed over their dumps.
"""

from __future__ import annotations

from typing import Annotated, Dict, List, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field

FlightType = Literal["round_trip", "one_way"]
CabinClass = Literal["business", "economy", "basic_economy"]
Insurance = Literal["yes", "no"]
MembershipLevel = Annotated[Literal["gold", "silver", "regular"], Field(description="Tier of the user's membership")]


class AirportCode(BaseModel):
    iata: str = Field(description="Three-letter IATA airport code")
    city: str = Field(description="City the airport serves")


class Name(BaseModel):
    first_name: str = Field(description="Given name")
    last_name: str = Field(description="Family name")


class Address(BaseModel):
    address1: str = Field(description="First address line")
    address2: Optional[str] = Field(None, description="Second address line, if any")
    city: str = Field(description="City")
    country: str = Field(description="Country")
    state: str = Field(description="State or province")
    zip: str = Field(description="Postal code")


class Payment(BaseModel):
    """One payment (or refund, when negative) made with a stored payment method."""

    payment_id: str = Field(
        description="Id of a payment method saved in the user's profile, e.g. 'credit_card_7815826'"
    )
    amount: int = Field(description="Amount charged to that method, in whole dollars")


class PaymentMethodBase(BaseModel):
    source: str = Field(description="Kind of payment method")
    id: str = Field(description="Id of the payment method")


class CreditCard(PaymentMethodBase):
    source: Literal["credit_card"] = Field(description="Always 'credit_card'")
    brand: str = Field(description="Card network, such as visa or mastercard")
    last_four: str = Field(description="Last four digits of the card number")


class GiftCard(PaymentMethodBase):
    source: Literal["gift_card"] = Field(description="Always 'gift_card'")
    amount: float = Field(description="Remaining balance in dollars")
    id: str = Field(description="Id of the gift card")


class Certificate(PaymentMethodBase):
    source: Literal["certificate"] = Field(description="Always 'certificate'")
    amount: float = Field(description="Value of the certificate in dollars")


PaymentMethod = Union[CreditCard, GiftCard, Certificate]


class Passenger(BaseModel):
    """A traveller on a reservation."""

    first_name: str = Field(description="Passenger's given name")
    last_name: str = Field(description="Passenger's family name")
    dob: str = Field(description="Passenger's date of birth, as YYYY-MM-DD")


SeatPrices = Annotated[dict[CabinClass, int], Field(description="Ticket price per cabin class, in dollars")]
AvailableSeats = Annotated[dict[CabinClass, int], Field(description="Seats left per cabin class")]


class FlightDateStatusAvailable(BaseModel):
    status: Literal["available"] = Field(description="The flight can still be booked")
    available_seats: AvailableSeats = Field(description="Seats left per cabin class")
    prices: SeatPrices = Field(description="Ticket price per cabin class")


class FlightDataStatusOnTime(BaseModel):
    status: Literal["on time"] = Field(description="The flight is expected on schedule")
    estimated_departure_time_est: str = Field(description="Expected departure (EST), YYYY-MM-DDTHH:MM:SS")
    estimated_arrival_time_est: str = Field(description="Expected arrival (EST), YYYY-MM-DDTHH:MM:SS")


class FlightDataStatusFlying(BaseModel):
    status: Literal["flying"] = Field(description="The flight is in the air")
    actual_departure_time_est: str = Field(description="Departure time (EST), YYYY-MM-DDTHH:MM:SS")
    estimated_arrival_time_est: str = Field(description="Expected arrival (EST), YYYY-MM-DDTHH:MM:SS")


class FlightDateStatusLanded(BaseModel):
    status: Literal["landed"] = Field(description="The flight has arrived")
    actual_departure_time_est: str = Field(description="Departure time (EST), YYYY-MM-DDTHH:MM:SS")
    actual_arrival_time_est: str = Field(description="Arrival time (EST), YYYY-MM-DDTHH:MM:SS")


class FlightDateStatusCancelled(BaseModel):
    status: Literal["cancelled"] = Field(description="The flight will not operate")


class FlightDateStatusDelayed(BaseModel):
    status: Literal["delayed"] = Field(description="The flight runs late")
    estimated_departure_time_est: str = Field(description="Expected departure (EST), YYYY-MM-DDTHH:MM:SS")
    estimated_arrival_time_est: str = Field(description="Expected arrival (EST), YYYY-MM-DDTHH:MM:SS")


FlightDateStatus = Union[
    FlightDateStatusAvailable,
    FlightDateStatusLanded,
    FlightDateStatusCancelled,
    FlightDateStatusDelayed,
    FlightDataStatusFlying,
    FlightDataStatusOnTime,
]


class FlightBase(BaseModel):
    flight_number: str = Field(description="Flight number, such as 'HAT001'")
    origin: str = Field(description="IATA code of the departure airport")
    destination: str = Field(description="IATA code of the arrival airport")


class Flight(FlightBase):
    scheduled_departure_time_est: str = Field(description="Scheduled departure (EST), HH:MM:SS")
    scheduled_arrival_time_est: str = Field(description="Scheduled arrival (EST), HH:MM:SS, '+1' if the next day")
    dates: Dict[str, FlightDateStatus] = Field(description="Status of the flight on each date (YYYY-MM-DD)")


class DirectFlight(FlightBase):
    status: Literal["available"] = Field(description="Always 'available' in search results")
    scheduled_departure_time_est: str = Field(description="Scheduled departure (EST), HH:MM:SS")
    scheduled_arrival_time_est: str = Field(description="Scheduled arrival (EST), HH:MM:SS, '+1' if the next day")
    date: Optional[str] = Field(description="Date of this leg, YYYY-MM-DD", default=None)
    available_seats: AvailableSeats = Field(description="Seats left per cabin class")
    prices: SeatPrices = Field(description="Ticket price per cabin class")


class ReservationFlight(FlightBase):
    date: str = Field(description="Date of the flight, YYYY-MM-DD")
    price: int = Field(description="Price paid per passenger, in dollars")


class FlightInfo(BaseModel):
    """One flight segment to book: a flight number on a date."""

    flight_number: str = Field(description="Flight number, such as 'HAT001'")
    date: str = Field(description="Date of the flight, YYYY-MM-DD, such as '2024-05-01'")


class User(BaseModel):
    user_id: str = Field(description="User id")
    name: Name = Field(description="User's name")
    address: Address = Field(description="User's postal address")
    email: str = Field(description="User's email")
    dob: str = Field(description="User's date of birth, YYYY-MM-DD")
    payment_methods: Dict[str, PaymentMethod] = Field(description="Saved payment methods by id")
    saved_passengers: List[Passenger] = Field(description="Passengers saved in the profile")
    membership: MembershipLevel = Field(description="Membership tier")
    reservations: List[str] = Field(description="Ids of the user's reservations")


class Reservation(BaseModel):
    reservation_id: str = Field(description="Reservation id")
    user_id: str = Field(description="Id of the user who booked it")
    origin: str = Field(description="IATA code where the trip starts")
    destination: str = Field(description="IATA code where the trip ends")
    flight_type: FlightType = Field(description="One way or round trip")
    cabin: CabinClass = Field(description="Cabin class of every passenger")
    flights: List[ReservationFlight] = Field(description="Flight segments")
    passengers: List[Passenger] = Field(description="Passengers")
    payment_history: List[Payment] = Field(description="Payments and refunds, oldest first")
    created_at: str = Field(description="Booking time, YYYY-MM-DDTHH:MM:SS")
    total_baggages: int = Field(description="Checked bags in total")
    nonfree_baggages: int = Field(description="Checked bags that were paid for")
    insurance: Insurance = Field(description="Whether travel insurance was bought")
    status: Optional[Literal["cancelled"]] = Field(description="'cancelled', or null while active", default=None)


class FlightDB(BaseModel):
    """All flights, users and reservations (the agent's DB)."""

    model_config = ConfigDict(extra="forbid")
    flights: Dict[str, Flight] = Field(description="Flights by flight number")
    users: Dict[str, User] = Field(description="Users by user id")
    reservations: Dict[str, Reservation] = Field(description="Reservations by reservation id")
