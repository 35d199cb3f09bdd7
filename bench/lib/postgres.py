"""A throwaway PostgreSQL server: a cluster in a temp folder, on a free loopback port, stopped and removed when done.

The tests, ``bench.class_follow --class-db postgres`` and ``deploy.check --class-db postgres`` start one. The server
refuses to run as root, so as root it runs as the ``postgres`` user (Debian's package makes it).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bench.lib.servers import free_port

BIN_DIRS = sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)  # Debian: /usr/lib/postgresql/15/bin
NOT_INSTALLED = "PostgreSQL's server (initdb, pg_ctl) is not installed (Debian: apt-get install postgresql)"


def server_bin() -> Path | None:
    """The folder with initdb and pg_ctl, or None where the server is not installed."""
    for folder in BIN_DIRS:
        if (folder / "initdb").exists() and (folder / "pg_ctl").exists():
            return folder
    found = shutil.which("initdb")
    return Path(found).parent if found and shutil.which("pg_ctl") else None


def _as_server_user(cmd: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


@dataclass
class Cluster:
    folder: Path
    port: int
    bin: Path

    @property
    def dsn(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def stop(self) -> None:
        subprocess.run(_as_server_user([str(self.bin / "pg_ctl"), "-D", str(self.folder / "data"), "-m", "fast",
                                        "-w", "stop"]), capture_output=True, timeout=60)
        shutil.rmtree(self.folder, ignore_errors=True)

    def cpu_seconds(self) -> float:
        """CPU seconds of the server so far: the postmaster, its live backends and the ones it reaped."""
        import psutil

        pid = int((self.folder / "data" / "postmaster.pid").read_text().split()[0])
        main = psutil.Process(pid)
        total = sum(main.cpu_times()[:4])  # user, system, and its reaped children's
        for child in main.children():
            try:
                total += sum(child.cpu_times()[:2])
            except psutil.Error:
                pass
        return total


def start_cluster() -> Cluster:
    """initdb + pg_ctl start on a free port, trusting local connections (a test server on loopback only)."""
    bin_dir = server_bin()
    if bin_dir is None:
        raise FileNotFoundError(NOT_INSTALLED)
    folder = Path(tempfile.mkdtemp(prefix="autoreg-pg-"))
    os.chmod(folder, 0o777)  # the postgres user writes its data and socket here
    port = free_port()
    data, log = folder / "data", folder / "server.log"
    run = dict(capture_output=True, text=True, timeout=120, check=True)
    subprocess.run(_as_server_user([str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust",
                                    "--no-sync", "-E", "UTF8"]), **run)
    options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
    subprocess.run(_as_server_user([str(bin_dir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(log),
                                    "-w", "start"]), **run)
    return Cluster(folder, port, bin_dir)
