"""User-side tools of the mock domain: a notification inbox (tau2 ``MockUserTools``)."""

from __future__ import annotations

from tau_tui.env import Toolkit, ToolType, as_model, helper, tool

from .data_model import Notification


class MockUserTools(Toolkit):
    """The user's notification inbox."""

    @tool(ToolType.READ)
    def check_notifications(self) -> list:
        """Check all notifications in the user's inbox.

        Returns:
            A list of all notifications.
        """
        return [as_model(n) for n in self.db.notifications.values()]

    @tool(ToolType.WRITE)
    def dismiss_notification(self, notification_id: str) -> str:
        """Dismiss (mark as read) a notification.

        Args:
            notification_id: The ID of the notification to dismiss.

        Returns:
            A confirmation message.
        """
        if notification_id not in self.db.notifications:
            raise ValueError(f"Notification {notification_id} not found")
        self.db.edit("notifications", notification_id)["status"] = "read"
        return f"Notification {notification_id} dismissed"

    @helper
    def add_notification(self, notification_id: str, message: str, task_id: str | None = None) -> Notification:
        """Add a notification to the inbox (for initialisation actions)."""
        notification = Notification(notification_id=notification_id, message=message, task_id=task_id).model_dump()
        self.db.set("notifications", notification_id, notification)
        return as_model(notification)

    @helper
    def assert_notification_status(self, notification_id: str, expected_status: str) -> bool:
        """Whether a notification has the expected status (for env assertions)."""
        if notification_id not in self.db.notifications:
            raise ValueError(f"Notification {notification_id} not found")
        return self.db.notifications[notification_id]["status"] == expected_status
