"""``python -m deploy.check``: run the two-replica check and print its JSON (exit 1 on a failed step)."""
from deploy.check.cli import main

raise SystemExit(main())
