"""The operator's command line: ``python -m autoreg_server.class_store list`` and ``... delete CODE``."""
from __future__ import annotations

import argparse
import time

from autoreg_server.class_store.class_store import ClassStore
from autoreg_server.class_store.codes import normal_code
from autoreg_server.class_store.core import ENV_DB, class_hours, default_path


def main(argv: list[str] | None = None) -> int:
    """The operator's view of this server's classes: list them, or delete one."""
    parser = argparse.ArgumentParser(prog="python -m autoreg_server.class_store", description=main.__doc__)
    parser.add_argument("action", choices=("list", "delete"))
    parser.add_argument("code", nargs="?", help="the class to delete")
    parser.add_argument("--db", help=f"the class file (default: ${ENV_DB}, else the app's cache dir)")
    args = parser.parse_args(argv)
    store = ClassStore(args.db or default_path(), hours=class_hours())
    if args.action == "list":
        for code in store.codes():
            info = store.info(code)
            seated = sum(not s.removed for s in store.students(code))
            print(f"{code}  {seated} students  expires {time.strftime('%Y-%m-%d %H:%M', time.localtime(info.expires))}")
        return 0
    if not args.code:
        parser.error("delete needs the class code")
    found = store.delete(args.code)
    print(f"{normal_code(args.code)}: {'deleted' if found else 'no such class'}")
    return 0 if found else 1
