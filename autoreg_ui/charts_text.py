"""What every chart says about itself: the switch that shows its numbers as a table."""
from __future__ import annotations

TABLE_TOGGLE = "Numbers as a table"
TABLE_HELP = ("Every value this chart draws, one row per bar, point or cell: for a screen reader, a "
              "spreadsheet, or reading exact figures.")
