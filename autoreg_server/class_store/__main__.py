"""``python -m autoreg_server.class_store list|delete CODE`` (see ``cli.main``)."""
from autoreg_server.class_store.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
