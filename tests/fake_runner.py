"""A stand-in for Streamlit's script runner, for the bench timers that patch it inside a server process."""
from pathlib import Path


def fake_script_runner(tmp_path: Path) -> Path:
    """A folder holding a tiny ``streamlit.runtime.scriptrunner.script_runner`` whose ``ScriptRunner._run_script``
    burns a little CPU; put it ahead of the real package on PYTHONPATH."""
    fake = tmp_path / "fake"
    (fake / "streamlit" / "runtime" / "scriptrunner").mkdir(parents=True)
    for folder in ("streamlit", "streamlit/runtime", "streamlit/runtime/scriptrunner"):
        (fake / folder / "__init__.py").write_text("")
    (fake / "streamlit/runtime/scriptrunner/script_runner.py").write_text(
        "class ScriptRunner:\n    def _run_script(self, rerun_data):\n        sum(range(10000))\n")
    return fake
