"""The check's copy of the shipped HAProxy config: this machine's ports, the same rules (affinity and class routing
removable, to show what breaks without them), and one header naming the server that answered."""
from __future__ import annotations

import shutil
from pathlib import Path

COOKIE = "AUTOREG_REPLICA"
TAGS = {"r1": "A", "r2": "B"}  # each replica's AUTOREG_REPLICA_TAG: its class codes start with it
SERVED_BY = "X-Autoreg-Server"  # added by this check's copy of the config: the server that answered


def haproxy_binary() -> Path | None:
    """HAProxy's program, or None where it is not installed (Debian: apt-get install haproxy)."""
    found = Path(shutil.which("haproxy") or "/usr/sbin/haproxy")
    return found if found.exists() else None


CLASS_RULES = ("ignore-persist ", "use-server ")


def haproxy_config(template: str, front: int, backends: list[int], affinity: bool = True,
                   class_routing: bool = True) -> str:
    """The shipped config with this machine's ports: same rules, loopback addresses (affinity and class routing
    removable), plus one response header naming the server that answered (how the check tells who served a tab)."""
    out = template.replace("bind *:8080", f"bind 127.0.0.1:{front}")
    if not affinity:  # the cookie directive, the servers' cookie values and the class links' Set-Cookie
        out = "".join(line for line in out.splitlines(keepends=True)
                      if not line.strip().startswith("cookie ") and f"{COOKIE}=" not in line)
        out = out.replace(" cookie r1", "").replace(" cookie r2", "")
    if not class_routing:  # ignore-persist, use-server and the class links' Set-Cookie
        out = "".join(line for line in out.splitlines(keepends=True)
                      if not line.strip().startswith(CLASS_RULES) and "txn.class_link" not in line)
    elif not all(f"use-server {r} if {{ urlp(class) -m beg -i {tag} }}" in out for r, tag in TAGS.items()):
        tags = ", ".join(f"{r}: {tag}" for r, tag in TAGS.items())
        raise RuntimeError(f"deploy/haproxy.cfg has no use-server rule per replica tag ({tags}): "
                           "the class check would test nothing")
    out = out.replace("backend autoreg\n", f"backend autoreg\n    http-response set-header {SERVED_BY} %s\n", 1)
    for i, port in enumerate(backends, start=1):
        out = out.replace(f"server r{i} replica{i}:8501", f"server r{i} 127.0.0.1:{port}")
    return out
