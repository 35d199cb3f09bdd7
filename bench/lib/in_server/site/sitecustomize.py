"""Imported by Python at start-up in a bench server whose PYTHONPATH holds this folder (and the repository's top):
installs the hooks its environment asks for (``bench.lib.in_server``)."""
from bench.lib.in_server import install_from_environ

install_from_environ()
