"""The user's phone in the telecom domain (tau2 ``TelecomUserTools``).

Each tool acts on the simulated device and answers in the same human-readable
text as tau2 (most of them end with the status bar). Settings that affect the
cellular connection re-run the network search, which derives the connection
from the SIM, the preferred network mode, the signal around the user, airplane
mode, the APN and whether the carrier line is active.

Reads use ``self.db.device`` / ``self.db.surroundings`` (shared, never
mutated); writes go through ``_set_device`` / ``_set_surroundings`` or
``self.db.edit`` on the nested part that changes, and only when a value
actually changes.
"""

from __future__ import annotations

import json
from typing import Any, Literal, Optional, Tuple, Union

from tau_tui.env import Toolkit, ToolType, helper, tool

from .user_data_model import (
    APNNames,
    APNSettings,
    AppPermissions,
    NetworkModePreference,
    NetworkStatus,
    NetworkTechnology,
    PerformanceLevel,
    SignalStrength,
    SimStatus,
    VpnDetails,
)

_SIGNAL_ICONS = {
    SignalStrength.NONE: "📵 No Signal",
    SignalStrength.POOR: "📶¹ Poor",
    SignalStrength.FAIR: "📶² Fair",
    SignalStrength.GOOD: "📶³ Good",
    SignalStrength.EXCELLENT: "📶⁴ Excellent",
}

# Download speed range (Mbps) per technology, and the share of it each signal level gets.
_SPEED_RANGE = {
    NetworkTechnology.TWO_G: (0.1, 0.4),
    NetworkTechnology.THREE_G: (1.0, 5.0),
    NetworkTechnology.FOUR_G: (10.0, 100.0),
    NetworkTechnology.FIVE_G: (50.0, 500.0),
    NetworkTechnology.NONE: (0.0, 0.0),
}
_SIGNAL_FACTOR = {
    SignalStrength.POOR: 0.2,
    SignalStrength.FAIR: 0.5,
    SignalStrength.GOOD: 0.8,
    SignalStrength.EXCELLENT: 1.0,
    SignalStrength.NONE: 0.0,
}
_SPEED_ADVICE = {
    "Very Poor": "Connection is very slow. Basic web browsing might be difficult.",
    "Poor": "Connection is slow. Web browsing may be sluggish, streaming difficult.",
    "Fair": "Connection is okay for web browsing and some standard definition streaming.",
    "Good": "Connection is good for most activities, including HD streaming.",
    "Excellent": "Connection is very fast.",
}
_SIM_MESSAGES = {
    SimStatus.ACTIVE: "Your SIM card is active and working.",
    SimStatus.MISSING: "No SIM card detected in the phone.",
    SimStatus.LOCKED_PIN: "The SIM card is locked with a PIN code.",
    SimStatus.LOCKED_PUK: "The SIM card is locked with a PUK code.",
}
# Which technology each single-technology preference connects to.
_MODE_TECHNOLOGY = {
    NetworkModePreference.FOUR_G_ONLY: NetworkTechnology.FOUR_G,
    NetworkModePreference.THREE_G_ONLY: NetworkTechnology.THREE_G,
    NetworkModePreference.TWO_G_ONLY: NetworkTechnology.TWO_G,
}


_ABSENT = object()


def _default_vpn() -> dict[str, Any]:
    return VpnDetails(
        server_address="192.168.1.1", protocol="OpenVPN", server_performance=PerformanceLevel.EXCELLENT
    ).model_dump()


def _same(old: Any, new: Any) -> bool:
    """Whether storing ``new`` over ``old`` would leave the state (and its hash) unchanged.

    True only for values of the same types all the way down (objects with the same keys in the same order),
    so their JSON is the same: floats compare by ``repr`` (``-0.0`` is not ``0.0``, NaN is NaN).
    """
    if old is new:
        return True
    kind = type(old)
    if kind is not type(new):
        return False
    if kind is dict:
        return len(old) == len(new) and all(
            _same(a, b) and _same(old[a], new[b]) for a, b in zip(old, new, strict=True)
        )
    if kind is list or kind is tuple:
        return len(old) == len(new) and all(_same(a, b) for a, b in zip(old, new, strict=True))
    if kind is float:
        return repr(old) == repr(new)
    if isinstance(new, (dict, list)):
        return json.dumps(old, sort_keys=True, default=str) == json.dumps(new, sort_keys=True, default=str)
    return old == new


def _on_off(flag: Any) -> str:
    return "ON" if flag else "OFF"


class TelecomUserTools(Toolkit):
    """The user's mobile phone: status checks and settings the user can change."""

    # --- state access ---------------------------------------------------------
    @property
    def device(self) -> dict[str, Any]:
        """The phone's current state (read-only)."""
        node = self.db.root.get("device", _ABSENT)
        return self.db.device if node is _ABSENT else node  # absent: the store's AttributeError, as tau2's

    @property
    def surroundings(self) -> dict[str, Any]:
        """The user's current surroundings (read-only)."""
        node = self.db.root.get("surroundings", _ABSENT)
        return self.db.surroundings if node is _ABSENT else node

    def _set_device(self, **changes: Any) -> None:
        current = self.device
        if all(key in current and _same(current[key], value) for key, value in changes.items()):
            return
        self.db.update(("device",), changes)

    def _set_surroundings(self, **changes: Any) -> None:
        current = self.surroundings
        if all(key in current and _same(current[key], value) for key, value in changes.items()):
            return
        self.db.update(("surroundings",), changes)

    # --- user info (task set-up) ------------------------------------------------
    @helper
    def set_user_info(self, name: str, phone_number: str) -> None:
        """Set the user's name and phone number (links the phone to a carrier line)."""
        self._set_surroundings(name=name, phone_number=phone_number)

    @helper
    def set_user_location(self, abroad: bool) -> None:
        """Place the user abroad or at home."""
        self._set_surroundings(is_abroad=abroad)

    # --- status bar -----------------------------------------------------------------
    def _status_bar(self) -> str:
        device = self.device
        parts = []
        if device["airplane_mode"]:
            parts.append("✈️ Airplane Mode")
        else:
            parts.append(_SIGNAL_ICONS.get(device["network_signal_strength"], "📵 No Signal"))
            technology = device["network_technology_connected"]
            if technology != NetworkTechnology.NONE:
                parts.append(technology.value)
            if device["data_enabled"] and technology != NetworkTechnology.NONE:
                parts.append("📱 Data Enabled")
                if device["data_saver_mode"]:
                    parts.append("🔽 Data Saver")
            else:
                parts.append("📵 Data Disabled")
        if device["wifi_enabled"] and device["wifi_connected"]:
            ssid = device["wifi_ssid"]
            parts.append(f"📡 Connected to {ssid}" if ssid else "📡 Enabled")
        if device["vpn_connected"]:
            parts.append("🔒 VPN Connected")
        parts.append(f"🔋 {device['battery_level']}%")
        return " | ".join(parts)

    def _with_status_bar(self, text: str) -> str:
        return f"{text}\nStatus Bar: {self._status_bar()}"

    @tool(ToolType.READ)
    def check_status_bar(self) -> str:
        """Show the icons in the phone's status bar.

        The bar shows signal strength, network type, mobile data (on, off or data saver),
        Wi-Fi, VPN and battery level.

        Returns:
            The status bar as text.
        """
        return f"Status Bar: {self._status_bar()}"

    # --- network ------------------------------------------------------------------------
    @tool(ToolType.READ)
    def check_network_status(self) -> str:
        """Show the phone's cellular and Wi-Fi connection status.

        Covers airplane mode, the SIM, connection state, signal, network type, mobile data,
        data roaming and Wi-Fi.

        Returns:
            One line per setting.
        """
        device = self.device
        lines = [
            f"Airplane Mode: {_on_off(device['airplane_mode'])}",
            f"SIM Card Status: {self._sim_status().value}",
            f"Cellular Connection: {device['network_connection_status'].value}",
            f"Cellular Signal: {device['network_signal_strength'].value}",
            f"Cellular Network Type: {device['network_technology_connected'].value}",
            f"Mobile Data Enabled: {'Yes' if device['data_enabled'] else 'No'}",
            f"Data Roaming Enabled: {'Yes' if device['roaming_enabled'] else 'No'}",
            f"Wi-Fi Radio: {_on_off(device['wifi_enabled'])}",
            f"Wi-Fi Connected: {'Yes' if device['wifi_connected'] else 'No'}",
        ]
        if device["wifi_connected"]:
            lines.append(f"Connected Wi-Fi Network: {device['wifi_ssid']}")
        return "\n".join(lines)

    @tool(ToolType.READ)
    def check_network_mode_preference(self) -> str:
        """Show which cellular network type the phone prefers.

        Returns:
            The current network mode preference.
        """
        return f"Network Mode Preference: {self.device['network_mode_preference'].value}"

    @tool(ToolType.WRITE)
    def set_network_mode_preference(self, mode: Union[NetworkModePreference, str]) -> str:
        """Choose which cellular network type the phone prefers (faster 4G/5G or older 3G/2G).

        The phone then searches for a network again.

        Args:
            mode: One of "4g_5g_preferred", "4g_only", "3g_only" or "2g_only".

        Returns:
            The new preference and the status bar.
        """
        try:
            if isinstance(mode, str):
                mode = NetworkModePreference(mode)
            self._set_device(network_mode_preference=mode)
            self.simulate_network_search()
            chosen = mode
        except ValueError:
            chosen = None
        if chosen is None:
            options = ", ".join(m.value for m in NetworkModePreference)
            return self._with_status_bar(
                f"Failed to set network mode: '{mode}' is not a valid option. Please use one of: {options}"
            )
        return self._with_status_bar(f"Preferred Network Mode set to: {chosen.value}")

    def _mobile_data_working(self) -> bool:
        """Mobile data needs radio and signal, service, roaming when abroad, data on and quota left."""
        device, around = self.device, self.surroundings
        if device["airplane_mode"] or device["network_signal_strength"] == SignalStrength.NONE:
            return False
        if device["network_connection_status"] == NetworkStatus.NO_SERVICE:
            return False
        if around["is_abroad"] and (not device["roaming_enabled"] or not around["roaming_allowed"]):
            return False
        if not device["data_enabled"]:
            return False
        if around["mobile_data_usage_exceeded"]:
            return False
        return True

    def _speed_test(self) -> Tuple[Optional[float], Optional[str]]:
        """(Mbps, rating), or (None, "No Connection") when mobile data does not work."""
        if not self._mobile_data_working():
            return None, "No Connection"
        device = self.device
        vpn = device["vpn_details"]
        if device["vpn_connected"] and vpn and vpn["server_performance"] == PerformanceLevel.POOR:
            factor = 0.1
        else:
            factor = 1.0
        if device["data_saver_mode"]:
            factor *= 0.2
        low, high = _SPEED_RANGE.get(device["network_technology_connected"], (0.0, 0.0))
        signal = _SIGNAL_FACTOR.get(device["network_signal_strength"], 0.0)
        speed = round((low + high) / 2.0 * signal * factor, 2)
        if speed < 1:
            rating = "Very Poor"
        elif speed < 5:
            rating = "Poor"
        elif speed < 25:
            rating = "Fair"
        elif speed < 100:
            rating = "Good"
        else:
            rating = "Excellent"
        return speed, rating

    @tool(ToolType.READ)
    def run_speed_test(self) -> str:
        """Measure the phone's current download speed over mobile data and say what it is good for.

        Returns:
            The speed in Mbps with a rating and advice, or why the test failed.
        """
        speed, rating = self._speed_test()
        if speed is None:
            return f"Speed test failed: {rating or 'Could not determine speed'}."
        advice = _SPEED_ADVICE.get(rating, "")
        return f"Speed Test Result: {speed:.2f} Mbps ({rating}). {advice}"

    @helper
    def simulate_network_search(self) -> None:
        """Re-derive the cellular connection from the SIM, preferred mode, local signal, airplane mode, APN and line."""
        device, around = self.device, self.surroundings
        signals = around["signal_strength"]
        sim = self._sim_status()
        if sim == SimStatus.ACTIVE:
            status = NetworkStatus.CONNECTED
            preference = device["network_mode_preference"]
            if preference == NetworkModePreference.FOUR_G_5G_PREFERRED:
                five_g = signals.get(NetworkTechnology.FIVE_G, SignalStrength.NONE)
                if five_g == SignalStrength.NONE:
                    technology = NetworkTechnology.FOUR_G
                    strength = signals.get(NetworkTechnology.FOUR_G, SignalStrength.NONE)
                else:
                    technology, strength = NetworkTechnology.FIVE_G, five_g
            else:
                technology = NetworkTechnology.FOUR_G
                for mode, tech in _MODE_TECHNOLOGY.items():
                    if preference == mode:
                        technology = tech
                        break
                strength = signals.get(technology, SignalStrength.NONE)
        else:
            status, technology, strength = NetworkStatus.NO_SERVICE, NetworkTechnology.NONE, SignalStrength.NONE
        no_service = (
            device["airplane_mode"]
            or device["active_apn_settings"]["apn_name"] == APNNames.BROKEN
            or not around["line_active"]
        )
        if no_service:
            status, technology, strength = NetworkStatus.NO_SERVICE, NetworkTechnology.NONE, SignalStrength.NONE
        self._set_device(
            network_connection_status=status,
            network_technology_connected=technology,
            network_signal_strength=strength,
        )

    # --- airplane mode ------------------------------------------------------------------
    def _toggle_airplane_mode(self) -> bool:
        device = self.device
        was_on = device["airplane_mode"]
        no_wifi = {"wifi_connected": False, "wifi_ssid": None, "wifi_signal_strength": SignalStrength.NONE}
        if was_on:
            changes: dict[str, Any] = {
                "airplane_mode": not was_on,
                "network_connection_status": NetworkStatus.SEARCHING,
            }
            if device["wifi_enabled"]:
                changes.update(no_wifi)
            self._set_device(**changes)
        else:
            self._set_device(airplane_mode=not was_on, **no_wifi)
            if self.device["vpn_connected"]:
                self._disconnect_vpn()
        self.simulate_network_search()
        return self.device["airplane_mode"]

    @tool(ToolType.WRITE)
    def toggle_airplane_mode(self) -> str:
        """Switch airplane mode on or off. While on, every radio is off: cellular, Wi-Fi and Bluetooth.

        Returns:
            The new airplane mode state and the status bar.
        """
        on = self._toggle_airplane_mode()
        return self._with_status_bar(f"Airplane Mode is now {_on_off(on)}.")

    @helper
    def turn_airplane_mode_on(self) -> str:
        """Make sure airplane mode is on."""
        if not self._toggle_airplane_mode():
            self._toggle_airplane_mode()
        return "Airplane Mode is now ON."

    @helper
    def turn_airplane_mode_off(self) -> str:
        """Make sure airplane mode is off."""
        if self._toggle_airplane_mode():
            self._toggle_airplane_mode()
        return "Airplane Mode is now OFF."

    # --- SIM card ---------------------------------------------------------------------------
    def _sim_status(self) -> SimStatus:
        device = self.device
        return SimStatus.MISSING if device["sim_card_missing"] else device["sim_card_status"]

    @tool(ToolType.READ)
    def check_sim_status(self) -> str:
        """Show whether the SIM card works: active, missing, or locked by a PIN or PUK code.

        Returns:
            The SIM card's status.
        """
        status = self._sim_status()
        return _SIM_MESSAGES.get(status, f"Unknown SIM status: {status.value}")

    @tool(ToolType.WRITE)
    def reseat_sim_card(self) -> str:
        """Take the SIM card out and put it back in, which can fix a SIM that is not recognised.

        Returns:
            A confirmation and the status bar.
        """
        self._set_device(sim_card_missing=False)
        self.simulate_network_search()
        assert not self.device["sim_card_missing"]
        assert self._sim_status() != SimStatus.MISSING
        return self._with_status_bar("SIM card re-seated successfully.")

    @helper
    def unseat_sim_card(self) -> str:
        """Take the SIM card out (undone by ``reseat_sim_card``)."""
        self._set_device(sim_card_missing=True)
        self.simulate_network_search()
        assert self.device["sim_card_missing"]
        assert self._sim_status() == SimStatus.MISSING
        return "SIM card un-seated successfully."

    @helper
    def lock_sim_card(self, mode: Literal["pin", "puk"]) -> str:
        """Lock the SIM with a PIN or PUK (no user tool can undo it)."""
        if mode == "pin":
            self._set_device(sim_card_status=SimStatus.LOCKED_PIN)
        elif mode == "puk":
            self._set_device(sim_card_status=SimStatus.LOCKED_PUK)
        self.simulate_network_search()
        if mode == "pin":
            assert self.device["sim_card_status"] == SimStatus.LOCKED_PIN
        elif mode == "puk":
            assert self.device["sim_card_status"] == SimStatus.LOCKED_PUK
        return f"SIM card locked successfully in {mode} mode."

    # --- mobile data and roaming --------------------------------------------------------------
    def _toggle_data(self) -> bool:
        enabled = not self.device["data_enabled"]
        self._set_device(data_enabled=enabled)
        self.simulate_network_search()
        return enabled

    @tool(ToolType.WRITE)
    def toggle_data(self) -> str:
        """Switch mobile (cellular) data on or off; it is what the phone uses for internet without Wi-Fi.

        Returns:
            The new mobile data state and the status bar.
        """
        on = self._toggle_data()
        return self._with_status_bar(f"Mobile Data is now {_on_off(on)}.")

    @helper
    def turn_data_on(self) -> str:
        """Switch mobile data on (without a network search)."""
        self._set_device(data_enabled=True)
        return "Data connection restored."

    @helper
    def turn_data_off(self) -> str:
        """Make sure mobile data is off."""
        if self._toggle_data():
            self._toggle_data()
        return "Data connection broken."

    def _toggle_roaming(self) -> bool:
        enabled = not self.device["roaming_enabled"]
        self._set_device(roaming_enabled=enabled)
        self.simulate_network_search()
        return enabled

    @tool(ToolType.WRITE)
    def toggle_roaming(self) -> str:
        """Switch data roaming on or off.

        Roaming lets the phone use mobile data on networks outside the carrier's own, e.g. abroad.

        Returns:
            The new data roaming state and the status bar.
        """
        on = self._toggle_roaming()
        return self._with_status_bar(f"Data Roaming is now {_on_off(on)}.")

    @helper
    def turn_roaming_on(self) -> str:
        """Make sure data roaming is on."""
        if not self._toggle_roaming():
            self._toggle_roaming()
        return "Data Roaming is now ON."

    @helper
    def turn_roaming_off(self) -> str:
        """Make sure data roaming is off."""
        if self._toggle_roaming():
            self._toggle_roaming()
        return "Data Roaming is now OFF."

    @tool(ToolType.READ)
    def check_data_restriction_status(self) -> str:
        """Show whether a data-limiting feature (Data Saver mode) is on.

        Returns:
            Whether Data Saver mode is on.
        """
        if self.device["data_saver_mode"]:
            return "Data Saver mode is ON (limits data usage)."
        return "Data Saver mode is OFF."

    def _toggle_data_saver_mode(self) -> bool:
        enabled = not self.device["data_saver_mode"]
        self._set_device(data_saver_mode=enabled)
        return enabled

    @tool(ToolType.WRITE)
    def toggle_data_saver_mode(self) -> str:
        """Switch Data Saver mode on or off; it cuts data use and can make mobile data slower.

        Returns:
            The new Data Saver state and the status bar.
        """
        on = self._toggle_data_saver_mode()
        return self._with_status_bar(f"Data Saver Mode is now {_on_off(on)}.")

    @helper
    def turn_data_saver_mode_on(self) -> str:
        """Make sure Data Saver mode is on."""
        if not self._toggle_data_saver_mode():
            self._toggle_data_saver_mode()
        return "Data Saver Mode is now ON."

    @helper
    def turn_data_saver_mode_off(self) -> str:
        """Make sure Data Saver mode is off."""
        if self._toggle_data_saver_mode():
            self._toggle_data_saver_mode()
        return "Data Saver Mode is now OFF."

    # --- APN settings ------------------------------------------------------------------------------
    @tool(ToolType.READ)
    def check_apn_settings(self) -> str:
        """Show the APN settings the phone uses for mobile data.

        Shows the APN name and the MMSC URL used for picture messages.

        Returns:
            The APN name and MMSC URL.
        """
        settings = self.device["active_apn_settings"]
        apn_name = settings["apn_name"].value or "Not Set"
        mmsc_url = settings["mmsc_url"] or "Not Set"
        return (
            f"Current APN Name: {apn_name}\nMMSC URL (for picture messages): {mmsc_url}\n"
            "(These are technical settings, usually best left unchanged.)"
        )

    @tool(ToolType.WRITE)
    def set_apn_settings(self, apn_settings: Union[APNSettings, dict]) -> str:
        """Replace the phone's APN settings; the phone then searches for a network again.

        Args:
            apn_settings: The new settings: apn_name ("internet" or "broken"), reset_at_reboot,
                mms_apn, mmsc_url, mms_proxy and mms_port.

        Returns:
            The APN now in use and the status bar.
        """
        if isinstance(apn_settings, dict):
            apn_settings = APNSettings(**apn_settings)
        if not isinstance(apn_settings, APNSettings):
            # tau2 stores whatever it was given, then fails reading its name.
            self._set_device(active_apn_settings=apn_settings)
            raise AttributeError(f"'{type(apn_settings).__name__}' object has no attribute 'apn_name'")
        self._set_device(active_apn_settings=apn_settings.model_dump())
        update = f"APN settings set to: {apn_settings.apn_name.value}"
        self.simulate_network_search()
        return self._with_status_bar(update)

    @tool(ToolType.WRITE)
    def reset_apn_settings(self) -> str:
        """Restore the default APN settings; the reset takes effect at the next reboot.

        Returns:
            A notice that the APN settings will reset at reboot, and the status bar.
        """
        if self.device["active_apn_settings"]["reset_at_reboot"] is not True:
            self.db.edit("device", "active_apn_settings")["reset_at_reboot"] = True
        self.simulate_network_search()
        return self._with_status_bar("APN settings will reset at reboot.")

    @helper
    def break_apn_settings(self) -> str:
        """Break the data APN so there is no service (fixed by resetting the APN and rebooting)."""
        if self.device["active_apn_settings"]["apn_name"] is not APNNames.BROKEN:
            self.db.edit("device", "active_apn_settings")["apn_name"] = APNNames.BROKEN
        self.simulate_network_search()
        assert self.device["network_connection_status"] == NetworkStatus.NO_SERVICE
        return "APN settings broken. Please call reset_apn_settings() to fix."

    @helper
    def break_apn_mms_setting(self) -> str:
        """Remove the MMSC URL so MMS fails (fixed by resetting the APN and rebooting)."""
        if self.device["active_apn_settings"]["mmsc_url"] is not None:
            self.db.edit("device", "active_apn_settings")["mmsc_url"] = None
        assert not self._can_send_mms()
        return "APN MMS setting broken. Please call reset_apn_settings() to fix."

    # --- Wi-Fi --------------------------------------------------------------------------------------
    @tool(ToolType.READ)
    def check_wifi_status(self) -> str:
        """Show whether Wi-Fi is on, which network it is connected to and the signal strength.

        Returns:
            The Wi-Fi status.
        """
        device = self.device
        if not device["wifi_enabled"]:
            return "Wi-Fi is turned OFF."
        if device["wifi_connected"]:
            return (
                f"Wi-Fi is ON and connected to '{device['wifi_ssid']}'. "
                f"Signal strength: {device['wifi_signal_strength'].value}."
            )
        return "Wi-Fi is ON but not connected to any network."

    @tool(ToolType.WRITE)
    def toggle_wifi(self) -> str:
        """Switch the Wi-Fi radio on or off (not possible while airplane mode is on).

        Returns:
            The new Wi-Fi state and the status bar.
        """
        if self.device["airplane_mode"]:
            return self._with_status_bar("Cannot change Wi-Fi settings while Airplane Mode is ON.")
        enabled = not self.device["wifi_enabled"]
        if enabled:
            self._set_device(wifi_enabled=enabled)
        else:
            self._set_device(
                wifi_enabled=enabled, wifi_connected=False, wifi_ssid=None, wifi_signal_strength=SignalStrength.NONE
            )
        return self._with_status_bar(f"Wi-Fi is now {_on_off(enabled)}.")

    # --- Wi-Fi calling ------------------------------------------------------------------------------
    @tool(ToolType.READ)
    def check_wifi_calling_status(self) -> str:
        """Show whether Wi-Fi Calling (calls over Wi-Fi instead of the cellular network) is on.

        Returns:
            Whether Wi-Fi Calling is on.
        """
        return f"Wi-Fi Calling is currently turned {_on_off(self.device['wifi_calling_enabled'])}."

    def _toggle_wifi_calling(self) -> bool:
        enabled = not self.device["wifi_calling_enabled"]
        self._set_device(wifi_calling_enabled=enabled)
        return enabled

    @tool(ToolType.WRITE)
    def toggle_wifi_calling(self) -> str:
        """Switch Wi-Fi Calling on or off; it places calls over Wi-Fi, which helps where the cellular signal is weak.

        Returns:
            The new Wi-Fi Calling state and the status bar.
        """
        on = self._toggle_wifi_calling()
        return self._with_status_bar(f"Wi-Fi Calling is now {_on_off(on)}.")

    @helper
    def set_wifi_calling(self, enabled: bool, mms_over_wifi: Optional[bool] = None) -> str:
        """Set Wi-Fi Calling, and MMS over Wi-Fi when given."""
        if self.device["wifi_calling_enabled"] != enabled:
            self._toggle_wifi_calling()
        message = f"Wi-Fi Calling is now {_on_off(enabled)}."
        if mms_over_wifi is not None:
            self._set_device(wifi_calling_mms_over_wifi=mms_over_wifi)
            message += f"\nMMS over Wi-Fi is now {_on_off(mms_over_wifi)}."
        return message

    # --- VPN ------------------------------------------------------------------------------------------
    @tool(ToolType.READ)
    def check_vpn_status(self) -> str:
        """Show whether a VPN is set up and connected, with the connection's details.

        Returns:
            The VPN status.
        """
        device = self.device
        if device["vpn_connected"]:
            details = device["vpn_details"]
            if details:
                return f"VPN is ON and connected. Details: {details}"
            return "VPN is ON and connected (no specific details available)."
        if device["vpn_enabled_setting"]:
            return "VPN is turned ON in settings, but currently not connected."
        return "VPN is turned OFF."

    @tool(ToolType.WRITE)
    def connect_vpn(self) -> str:
        """Connect the phone's VPN.

        Returns:
            Whether the VPN connected, and the status bar.
        """
        if self.device["vpn_connected"]:
            return "VPN already connected."
        self._set_device(vpn_connected=True, vpn_details=_default_vpn())
        return self._with_status_bar("VPN connected successfully.")

    def _disconnect_vpn(self) -> bool:
        if not self.device["vpn_connected"]:
            return False
        self._set_device(vpn_connected=False, vpn_details=None)
        return True

    @tool(ToolType.WRITE)
    def disconnect_vpn(self) -> str:
        """Disconnect the VPN.

        Traffic then no longer goes through a VPN server, which can change speed and what is reachable.

        Returns:
            Whether a VPN was disconnected, and the status bar.
        """
        if self._disconnect_vpn():
            return self._with_status_bar("VPN disconnected successfully.")
        return self._with_status_bar("No active VPN connection to disconnect.")

    @helper
    def break_vpn(self) -> str:
        """Connect a VPN whose server performs poorly, which makes mobile data slow."""
        self.connect_vpn()
        if self.device["vpn_details"] is None:
            raise AttributeError("'NoneType' object has no attribute 'server_performance'")
        if self.device["vpn_details"]["server_performance"] is not PerformanceLevel.POOR:
            self.db.edit("device", "vpn_details")["server_performance"] = PerformanceLevel.POOR
        return "VPN connection broken."

    # --- apps ------------------------------------------------------------------------------------------
    @tool(ToolType.READ)
    def check_installed_apps(self) -> str:
        """List the apps installed on the phone.

        Returns:
            The names of the installed apps.
        """
        return f"The following apps are installed on the phone: {', '.join(self.device['app_statuses'].keys())}"

    @staticmethod
    def _granted(permissions: dict[str, Any]) -> list[str]:
        return [name.replace("_", " ").lower() for name, allowed in permissions.items() if allowed]

    @tool(ToolType.READ)
    def check_app_status(self, app_name: str) -> str:
        """Show an app's details, including the permissions it holds.

        Args:
            app_name: The name of the app, e.g. "messaging" or "browser".

        Returns:
            The app's status and granted permissions.
        """
        app = self.device["app_statuses"].get(app_name)
        if not app:
            return f"App '{app_name}' not found on this phone."
        lines = [f"Status for App: {app_name}"]
        granted = self._granted(app["permissions"])
        if not granted:
            lines.append(" - Permissions: None granted.")
        else:
            lines.append(" - Permissions Granted:")
            lines.extend(f"   - {perm}" for perm in granted)
        return "\n".join(lines)

    @tool(ToolType.READ)
    def check_app_permissions(self, app_name: str) -> str:
        """Show which permissions an app has (such as SMS, storage, phone or network access).

        Args:
            app_name: The name of the app, e.g. "messaging" or "browser".

        Returns:
            The permissions the app holds.
        """
        app = self.device["app_statuses"].get(app_name)
        if not app:
            return f"App '{app_name}' not found on this phone."
        granted = self._granted(app["permissions"])
        if not granted:
            return f"App '{app_name}' currently has no permissions granted."
        return f"App '{app_name}' has permission for: {', '.join(granted)}."

    @tool(ToolType.WRITE)
    def grant_app_permission(self, app_name: str, permission: str) -> str:
        """Give an app a permission it needs to work (for example storage or SMS access).

        Args:
            app_name: The name of the app, e.g. "messaging".
            permission: The permission to grant, in lowercase: "sms", "storage", "phone" or "network".

        Returns:
            Whether the permission was granted, and the status bar.
        """
        app = self.device["app_statuses"].get(app_name)
        permission = permission.lower()
        if not app:
            return self._with_status_bar(f"Error. App '{app_name}' not found. Cannot grant permission.")
        available = list(app["permissions"].keys())
        if permission not in available:
            return self._with_status_bar(
                f"Error. Permission '{permission}' not tracked for app '{app_name}', available permissions: {available}"
            )
        if app["permissions"][permission] is not True:
            self.db.edit("device", "app_statuses", app_name, "permissions")[permission] = True
        return self._with_status_bar(f"Success. Permission '{permission}' granted to app '{app_name}'.")

    @helper
    def remove_app_permission(self, app_name: str, permission: str) -> Tuple[bool, str]:
        """Take a permission away from an app (task set-up)."""
        app = self.device["app_statuses"].get(app_name)
        permission = permission.lower()
        if not app:
            return False, f"App '{app_name}' not found. Cannot remove permission."
        if permission not in AppPermissions.model_fields:
            if hasattr(AppPermissions(), permission):
                raise ValueError(f'"AppPermissions" object has no field "{permission}"')
            return False, f"Permission '{permission}' not tracked for app '{app_name}'."
        if app["permissions"][permission] is not False:
            self.db.edit("device", "app_statuses", app_name, "permissions")[permission] = False
        return True, f"Permission '{permission}' removed from app '{app_name}'."

    # --- MMS -----------------------------------------------------------------------------------------------
    def _can_send_mms(self) -> bool:
        """MMS needs mobile data on 3G or better, no MMS over Wi-Fi, an MMSC URL, and SMS + storage for messaging."""
        if not self._mobile_data_working():
            return False
        device = self.device
        if device["network_technology_connected"] == NetworkTechnology.TWO_G:
            return False
        if device["wifi_calling_enabled"] and device["wifi_calling_mms_over_wifi"]:
            return False
        if device["active_apn_settings"]["mmsc_url"] is None:
            return False
        messaging = device["app_statuses"].get("messaging")
        if messaging is None:
            return False
        return messaging["permissions"]["storage"] and messaging["permissions"]["sms"]

    @tool(ToolType.READ)
    def can_send_mms(self) -> str:
        """Check whether the phone's messaging app can send MMS (picture) messages.

        Returns:
            Whether MMS messages can be sent.
        """
        if self._can_send_mms():
            return "Your messaging app can send MMS messages."
        return "Your messaging app cannot send MMS messages."

    # --- device -------------------------------------------------------------------------------------------
    @tool(ToolType.WRITE)
    def reboot_device(self) -> str:
        """Restart the phone.

        Every service and connection restarts, which clears many temporary glitches; a pending
        APN reset is applied.

        Returns:
            What happened during the restart, and the status bar.
        """
        lines = []
        if self.device["active_apn_settings"]["reset_at_reboot"]:
            lines.append("Resetting APN settings...")
            self._set_device(active_apn_settings=APNSettings().model_dump())
        lines.append("Restarting network services...")
        self._set_device(network_connection_status=NetworkStatus.SEARCHING)
        self.simulate_network_search()
        return self._with_status_bar("\n".join(lines))

    # --- payments -------------------------------------------------------------------------------------------
    @tool(ToolType.READ)
    def check_payment_request(self) -> str:
        """Check whether the agent has sent a request to pay a bill.

        Returns:
            The bill and amount requested, if any.
        """
        request = self.surroundings["payment_request"]
        if request is None:
            return "No payment request has been made."
        return f"You have a payment request for bill {request['bill_id']} of {request['amount_due']} USD."

    @tool(ToolType.WRITE)
    def make_payment(self) -> str:
        """Pay the bill the agent sent a payment request for.

        Returns:
            A confirmation of the payment, or that there is no request to pay.
        """
        request = self.surroundings["payment_request"]
        if request is None:
            return "You do not have a payment request."
        if request["paid"] is not True:
            request = self.db.edit("surroundings", "payment_request")
            request["paid"] = True
        return f"Payment of {request['amount_due']} USD has been made for bill {request['bill_id']}."

    # --- assertions (env assertions of tasks) --------------------------------------------------------------
    @helper
    def assert_airplane_mode_status(self, expected_status: bool) -> bool:
        """Whether airplane mode is as expected."""
        return self.device["airplane_mode"] == expected_status

    @helper
    def assert_service_status(self, expected_status: str) -> bool:
        """Whether the cellular connection status is as expected."""
        return self.device["network_connection_status"] == NetworkStatus(expected_status)

    @helper
    def assert_mobile_data_status(self, expected_status: bool) -> bool:
        """Whether mobile data works (or not) as expected."""
        return self._mobile_data_working() == expected_status

    @helper
    def assert_mobile_roaming_status(self, expected_status: bool) -> bool:
        """Whether the phone's data roaming setting is as expected."""
        return self.device["roaming_enabled"] == expected_status

    @helper
    def assert_mobile_data_saver_mode_status(self, expected_status: bool) -> bool:
        """Whether Data Saver mode is as expected."""
        return self.device["data_saver_mode"] == expected_status

    @helper
    def assert_internet_speed(self, expected_speed: float, expected_desc: Optional[str] = None) -> bool:
        """Whether the speed test reaches ``expected_speed`` (and has the expected rating, if given)."""
        speed, rating = self._speed_test()
        speed = speed or 0.0
        if expected_desc is None:
            return speed >= expected_speed
        return speed >= expected_speed and rating.lower() == expected_desc.lower()

    @helper
    def assert_internet_not_excellent(self) -> bool:
        """Whether the speed test rates the connection below excellent."""
        _, rating = self._speed_test()
        return rating.lower() != "excellent"

    @helper
    def assert_can_send_mms(self, expected_status: bool) -> bool:
        """Whether MMS sending works (or not) as expected."""
        return self._can_send_mms() == expected_status

    @helper
    def assert_mobile_data_usage_exceeded(self, expected_status: bool) -> bool:
        """Whether the data-quota-exceeded flag is as expected."""
        return self.surroundings["mobile_data_usage_exceeded"] == expected_status
