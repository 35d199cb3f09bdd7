"""Every sentence the step row's press counter shows: how many presses the server has still to run."""
from __future__ import annotations

PENDING_ONE = "1 press still to run…"
# {n}: this tab's presses not yet run (not yet applied, or waiting on the server behind a Generate)
PENDING_MANY = "{n} presses still to run…"
