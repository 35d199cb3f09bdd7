"""The server's entry point: streamlit run app.py, in st.navigation mode from the very first run."""
from autoreg_ui import serve


def test_serve_runs_app_py_with_the_given_options(monkeypatch):
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.web import cli

    seen = {}
    monkeypatch.setattr(cli, "main", lambda: seen.setdefault("argv", list(serve.sys.argv)))
    monkeypatch.setattr(PagesManager, "uses_pages_directory", None, raising=False)
    monkeypatch.setattr(serve.sys, "argv", ["python"])
    monkeypatch.setenv("AUTOREG_WARM", "0")  # no model loaded here (the server loads it before it answers)
    serve.main(["--server.port", "8765"])
    assert seen["argv"] == ["streamlit", "run", serve.ASGI, "--server.port", "8765"]  # app.py with its routes
    assert serve.ASGI.endswith("asgi.py") and PagesManager.uses_pages_directory is False
