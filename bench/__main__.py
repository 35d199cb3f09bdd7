"""``python -m bench``: run the benchmark and print its JSON."""
from .run import main

raise SystemExit(main())
