"""Mock domain data, shaped like tau2's so validation, defaults and hashes agree."""

from __future__ import annotations

from typing import Dict, List, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

TaskStatus = Literal["pending", "completed"]
NotificationStatus = Literal["unread", "read"]


class Task(BaseModel):
    task_id: str
    title: str
    description: Optional[str] = None
    status: TaskStatus


class User(BaseModel):
    user_id: str
    name: str
    tasks: List[str]


class MockDB(BaseModel):
    """Users and their tasks (the agent's DB)."""

    model_config = ConfigDict(extra="forbid")
    tasks: Dict[str, Task]
    users: Dict[str, User]


class Notification(BaseModel):
    model_config = ConfigDict(extra="forbid")
    notification_id: str
    message: str
    status: NotificationStatus = "unread"
    task_id: Optional[str] = None


class MockUserDB(BaseModel):
    """The user's notification inbox (the user's DB)."""

    model_config = ConfigDict(extra="forbid")
    notifications: Dict[str, Notification] = Field(default_factory=dict)
