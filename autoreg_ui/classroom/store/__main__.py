"""``python -m autoreg_ui.classroom.store list|delete CODE`` (see ``cli.main``)."""
from autoreg_ui.classroom.store.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
