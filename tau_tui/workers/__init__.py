"""Work run elsewhere: on local worker processes, on Ray actors, with the domain data shipped to them.

Layers inside this package (contract ``workers`` in ``pyproject.toml``):

- ``pool`` | ``process_rollout`` (independent): replay and evaluation units on worker processes and Ray
  actors, and rollouts on Ray actors (``RayRollout``) | a rollout's episodes on local worker processes
  (``ProcessRollout``, ``tau-tui run --workers N``);
- ``parcel``: ``--ship-data``'s domain data, packed here and unpacked on each node (used by ``pool``); it imports
  nothing from the ``evaluate`` layer up, as when it sat beside ``evaluate`` (contract ``parcel_plain``).

The package sits below the composition root (``tau_tui.workspace`` builds executors and rollouts and hands
the workers its class), and nothing here imports textual. Importing the package imports none of its modules.
"""
