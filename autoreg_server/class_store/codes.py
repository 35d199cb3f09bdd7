"""What class members type, as the store keeps it: class codes (short, without look-alike characters, starting
with this replica's tag) and nicknames.
"""
from __future__ import annotations

import secrets

from autoreg_server import settings

ENV_REPLICA_TAG = settings.variable("replica_tag")
ALPHABET = settings.CODE_ALPHABET  # no 0/O, 1/I/L look-alikes
CODE_LENGTH = 6
NICKNAME_MAX = 24


def replica_tag() -> str:
    """This replica's one-character tag (``AUTOREG_REPLICA_TAG``, from ALPHABET), or '' on a single server.

    Every class code this replica makes starts with it, so a load balancer can send each member of a class
    to the replica that holds the class (``deploy/haproxy.cfg`` routes on the first character of ``class``).
    """
    return settings.current().replica_tag


def new_code(tag: str = "") -> str:
    return tag + "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH - len(tag)))


def normal_code(text: str) -> str:
    """A typed or linked code as stored: upper case, spaces and dashes dropped, at most 16 characters."""
    return "".join(ch for ch in str(text or "").upper() if ch.isalnum())[:16]


def clean_nickname(text: str) -> str:
    """At most ``NICKNAME_MAX`` printable characters, spaces collapsed; empty means anonymous."""
    kept = "".join(" " if ch.isspace() else ch for ch in str(text or "") if ch.isprintable() or ch.isspace())
    return " ".join(kept.split())[:NICKNAME_MAX]
