"""What a lesson page's head says about itself: the box holding its explanation after the first paragraph."""
from __future__ import annotations

MORE = "More of the explanation"
