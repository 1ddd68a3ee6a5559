"""Telecom user-side data: the user's phone and surroundings, shaped like tau2's.

Same class names, fields, defaults and validation flags as tau2's user data
model, so the canonical dump (and hash) of the user DB is identical.
"""

from __future__ import annotations

from enum import Enum
from typing import Dict, Optional

from pydantic import Field

from .data_model import StrictModel


class SimStatus(str, Enum):
    ACTIVE = "active"
    MISSING = "missing"
    LOCKED_PIN = "locked_pin"
    LOCKED_PUK = "locked_puk"


class NetworkTechnology(str, Enum):
    NONE = "none"
    TWO_G = "2G"
    THREE_G = "3G"
    FOUR_G = "4G"
    FIVE_G = "5G"


class NetworkModePreference(str, Enum):
    FOUR_G_5G_PREFERRED = "4g_5g_preferred"
    FOUR_G_ONLY = "4g_only"
    THREE_G_ONLY = "3g_only"
    TWO_G_ONLY = "2g_only"


class SignalStrength(str, Enum):
    NONE = "none"
    POOR = "poor"
    FAIR = "fair"
    GOOD = "good"
    EXCELLENT = "excellent"


class PerformanceLevel(str, Enum):
    UNKNOWN = "unknown"
    POOR = "poor"
    FAIR = "fair"
    GOOD = "good"
    EXCELLENT = "excellent"


class NetworkStatus(str, Enum):
    CONNECTED = "connected"
    SEARCHING = "searching"
    NO_SERVICE = "no_service"
    EMERGENCY_ONLY = "emergency_only"


class APNNames(str, Enum):
    INTERNET = "internet"
    BROKEN = "broken"


class APNSettings(StrictModel):
    """One access point configuration (data APN plus the MMS settings)."""

    apn_name: APNNames = APNNames.INTERNET
    reset_at_reboot: bool = False
    mms_apn: Optional[str] = "mms"
    mmsc_url: Optional[str] = "http://mms.carrier.com/mms/wapenc"
    mms_proxy: Optional[str] = None
    mms_port: Optional[int] = None


class VpnDetails(StrictModel):
    """The VPN connection's server, protocol and performance."""

    server_address: Optional[str] = None
    protocol: Optional[str] = None
    server_performance: PerformanceLevel = Field(default=PerformanceLevel.UNKNOWN, validate_default=True)


class AppPermissions(StrictModel):
    sms: bool = False
    storage: bool = False
    phone: bool = False
    network: bool = False


class AppStatus(StrictModel):
    app_name: str
    permissions: AppPermissions = Field(default_factory=AppPermissions)


def _default_apps() -> Dict[str, AppStatus]:
    return {
        "messaging": AppStatus(app_name="messaging", permissions=AppPermissions(sms=True, storage=True, phone=True)),
        "browser": AppStatus(app_name="browser", permissions=AppPermissions(network=True, storage=True)),
    }


class MockPhoneAttributes(StrictModel):
    """The simulated phone: SIM, radio, data, Wi-Fi, calling, VPN and app state."""

    sim_card_status: SimStatus = Field(default=SimStatus.ACTIVE, validate_default=True)
    sim_card_missing: bool = False
    airplane_mode: bool = False
    network_signal_strength: SignalStrength = Field(default=SignalStrength.GOOD, validate_default=True)
    network_technology_connected: NetworkTechnology = Field(default=NetworkTechnology.FIVE_G, validate_default=True)
    network_connection_status: NetworkStatus = Field(default=NetworkStatus.CONNECTED, validate_default=True)
    battery_level: int = 80
    data_enabled: bool = True
    roaming_enabled: bool = False
    network_mode_preference: NetworkModePreference = Field(
        default=NetworkModePreference.FOUR_G_5G_PREFERRED, validate_default=True
    )
    active_apn_settings: APNSettings = Field(default_factory=APNSettings)
    wifi_enabled: bool = False
    wifi_connected: bool = False
    wifi_ssid: Optional[str] = None
    wifi_signal_strength: SignalStrength = Field(default=SignalStrength.NONE, validate_default=True)
    wifi_calling_enabled: bool = False
    wifi_calling_mms_over_wifi: bool = False
    data_saver_mode: bool = False
    vpn_enabled_setting: bool = False
    vpn_connected: bool = False
    vpn_details: Optional[VpnDetails] = None
    app_statuses: Dict[str, AppStatus] = Field(default_factory=_default_apps)


class PaymentRequest(StrictModel):
    """A bill the agent asked the user to pay, and whether it has been paid."""

    bill_id: str
    amount_due: float
    paid: bool = False


def _default_signal() -> Dict[NetworkTechnology, SignalStrength]:
    return {
        NetworkTechnology.TWO_G: SignalStrength.POOR,
        NetworkTechnology.THREE_G: SignalStrength.FAIR,
        NetworkTechnology.FOUR_G: SignalStrength.GOOD,
        NetworkTechnology.FIVE_G: SignalStrength.EXCELLENT,
    }


class UserSurroundings(StrictModel):
    """Where the user is and what the carrier allows them (kept in step with the agent DB by sync)."""

    name: Optional[str] = None
    phone_number: Optional[str] = None
    is_abroad: bool = False
    roaming_allowed: bool = False
    signal_strength: dict[NetworkTechnology, SignalStrength] = Field(default_factory=_default_signal)
    mobile_data_usage_exceeded: bool = False
    line_active: bool = True
    payment_request: Optional[PaymentRequest] = None


class TelecomUserDB(StrictModel):
    """The user's side of the world: their phone and their surroundings."""

    device: MockPhoneAttributes = Field(default_factory=MockPhoneAttributes)
    surroundings: UserSurroundings = Field(default_factory=UserSurroundings)
