"""What the README and docs/ point at, read from their Markdown: links and anchors, `AUTOREG_*` names, commands
(`python -m …`, `make …`), and paths into the tree; and the checks that each resolves. Each check is a pure
function of the text (and the tree), so a test can also run it on a made-up broken page."""
from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))

LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$", re.MULTILINE)
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
INLINE = re.compile(r"`([^`\n]+)`")
SETTING = re.compile(r"\bAUTOREG_[A-Z0-9_]*[A-Z0-9]\b")
PYTHON_M = re.compile(r"\bpython -m ([A-Za-z_][\w.]*)")
MAKE = re.compile(r"(?:^|[\s(;&|])make ([a-z][\w-]*)")
TREE_PATH = re.compile(r"^(?:\.?[\w-]+/)+[\w.-]+\.(?:py|cfg|yaml|toml|json|md|txt)(?:::(\w+))?$")
MODULE = re.compile(r"^((?:autoreg_core|autoreg_server|autoreg_ui|bench|deploy)(?:\.\w+)+)\b")

# AUTOREG_* names the docs may use that are not server settings, each with the file that defines it
NOT_SETTINGS = {
    "AUTOREG_COOKIE_SECRET": "deploy/compose.yaml",  # docker compose passes it into Streamlit's cookie secret
    "AUTOREG_DB_PASSWORD": "deploy/compose.postgres.yaml",  # the compose file's PostgreSQL password
    "AUTOREG_REPLICA": "deploy/haproxy.cfg",  # the balancer's affinity cookie
}


def code_spans(text: str) -> list[str]:
    """Everything written as code: fenced blocks line by line, and inline spans."""
    spans = [line for block in FENCE.findall(text) for line in block.splitlines()[1:-1]]
    spans += INLINE.findall(FENCE.sub("", text))
    return spans


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, markup and punctuation dropped, spaces as dashes."""
    text = re.sub(r"[`*_]|!?\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """The anchors of a Markdown page's headings (a repeated heading gets -1, -2, … as on GitHub)."""
    seen: dict[str, int] = {}
    out = set()
    for _, title in HEADING.findall(FENCE.sub("", text)):
        base = slug(title)
        n = seen.get(base, 0)
        out.add(base if n == 0 else f"{base}-{n}")
        seen[base] = n + 1
    return out


def broken_links(page: Path, text: str) -> list[str]:
    """Each relative link or image of ``page`` whose file, folder or heading anchor does not exist."""
    found = []
    for target in LINK.findall(FENCE.sub("", text)):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto: are not ours to check
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve()
        if path and not file.exists():
            found.append(f"{page.name}: {target} (no such file)")
        elif anchor and (not path or file.suffix == ".md"):
            known = anchors(text if not path else file.read_text(encoding="utf-8"))
            if anchor not in known:
                found.append(f"{page.name}: {target} (no heading #{anchor})")
    return found


def named_settings(text: str) -> set[str]:
    return set(SETTING.findall(text))


def unknown_settings(named: set[str], settings: set[str], root: Path = ROOT) -> list[str]:
    """Names that are neither a setting nor a documented other name found in the file said to define it."""
    bad = []
    for name in sorted(named - settings):
        home = NOT_SETTINGS.get(name)
        if home is None or name not in (root / home).read_text(encoding="utf-8"):
            bad.append(name)
    return bad


def modules_run(text: str) -> set[str]:
    """The modules the text runs with ``python -m``."""
    return {m for span in code_spans(text) for m in PYTHON_M.findall(span)}


def modules_named(text: str) -> set[str]:
    """Dotted module names of the project written as code (``bench.click_cost``, ``autoreg_core.engine.replay``)."""
    return {m.group(1) for span in code_spans(text) if (m := MODULE.match(span.strip()))}


def module_exists(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def help_fails(module: str, timeout_s: float = 300) -> str | None:
    """Run ``python -m module --help``; None when it exits 0 printing a usage line, else what went wrong."""
    try:
        run = subprocess.run([sys.executable, "-m", module, "--help"], cwd=ROOT, capture_output=True, text=True,
                             timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return f"{module}: --help ran over {timeout_s} s"
    if run.returncode != 0 or "usage:" not in run.stdout.lower():
        return f"{module}: --help exited {run.returncode}: {(run.stderr or run.stdout)[-300:]}"
    return None


def make_targets_named(text: str) -> set[str]:
    return {t for span in code_spans(text) for t in MAKE.findall(span)}


def makefile_targets(makefile: Path = ROOT / "Makefile") -> set[str]:
    return set(re.findall(r"^([A-Za-z][\w-]*)\s*:(?!=)", makefile.read_text(encoding="utf-8"), re.MULTILINE))


def tree_paths(text: str) -> set[str]:
    """Repository paths written as inline code (``bench/lib/goals.py``, ``tests/x.py::test_name``)."""
    return {span.strip() for span in INLINE.findall(FENCE.sub("", text)) if TREE_PATH.match(span.strip())}


def missing_paths(paths: set[str], root: Path = ROOT) -> list[str]:
    """Paths that are not in the tree, and ``file::test`` names that the file does not define. Paths under
    ``test-artifacts/`` are written by the tests and are not checked."""
    bad = []
    for written in sorted(paths):
        path, _, test = written.partition("::")
        if path.startswith("test-artifacts/"):
            continue
        file = root / path
        if not file.exists():
            bad.append(f"{written} (no such file)")
        elif test and not re.search(rf"^\s*def {re.escape(test)}\(", file.read_text(encoding="utf-8"), re.MULTILINE):
            bad.append(f"{written} (no such test)")
    return bad
