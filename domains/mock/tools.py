"""Agent tools of the mock domain (tau2 ``MockTools``: same names, types, errors)."""

from __future__ import annotations

from tau_tui.env import Toolkit, ToolType, as_model, helper, tool

from .data_model import Task


class MockTools(Toolkit):
    """Create and update tasks for users."""

    @tool(ToolType.WRITE)
    def create_task(self, user_id: str, title: str, description: str = None) -> Task:
        """
        Create a new task for a user.

        Args:
            user_id: The ID of the user creating the task
            title: The title of the task
            description: Optional description of the task

        Returns:
            The created task
        """
        if user_id not in self.db.users:
            raise ValueError(f"User {user_id} not found")
        task_id = f"task_{len(self.db.tasks) + 1}"
        task = Task(task_id=task_id, title=title, description=description, status="pending").model_dump()
        self.db.set("tasks", task_id, task)
        self.db.edit("users", user_id)["tasks"].append(task_id)
        return as_model(task)

    @tool(ToolType.READ)
    def get_users(self) -> list:
        """
        Get all users in the database.
        """
        return [as_model(user) for user in self.db.users.values()]

    @tool(ToolType.WRITE)
    def update_task_status(self, task_id: str, status: str) -> Task:
        """
        Update the status of a task.

        Args:
            task_id: The ID of the task to update
            status: The new status of the task ('pending' or 'completed')

        Returns:
            The updated task
        """
        if task_id not in self.db.tasks:
            raise ValueError(f"Task {task_id} not found")
        task = self.db.edit("tasks", task_id)
        task["status"] = status
        return as_model(task)

    @tool(ToolType.GENERIC)
    def transfer_to_human_agents(self, summary: str) -> str:
        """
        Transfer the user to a human agent, with a summary of the user's issue.
        Only transfer if the user explicitly asks for a human agent, or if the
        policy and the available tools cannot solve the user's issue.

        Args:
            summary: A summary of the user's issue.

        Returns:
            A message indicating the user has been transferred to a human agent.
        """
        return "Transfer successful"

    @helper
    def assert_number_of_tasks(self, user_id: str, expected_number: int) -> bool:
        """Whether the user has exactly ``expected_number`` tasks."""
        if user_id not in self.db.users:
            raise ValueError(f"User {user_id} not found")
        return len(self.db.users[user_id]["tasks"]) == expected_number

    @helper
    def assert_task_status(self, task_id: str, expected_status: str) -> bool:
        """Whether the task has the expected status."""
        if task_id not in self.db.tasks:
            raise ValueError(f"Task {task_id} not found")
        return self.db.tasks[task_id]["status"] == expected_status
