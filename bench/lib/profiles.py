"""Profiles of a server's script runs, read back as JSON rows. Two readings of two kinds of profile:

* ``per_click_profile``: one ``pstats.Stats`` of many clicks, as milliseconds per click: the functions with the
  most time of their own, and the cumulative time of the app's parts and Streamlit's element calls;
* ``profile_by_run_kind``: the folder ``bench.lib.in_server.run_kind_profiler`` wrote, as runs and CPU per kind of
  run (a follower's poll, a page update), each kind's top functions written out as text.
"""
from __future__ import annotations

import io
import pstats
import statistics
from pathlib import Path

from bench.lib.servers import ROOT

# the app's functions (and Streamlit's element calls) whose cumulative time a per-click profile lists
APP_PARTS = ("stepper", "step_buttons", "next_token", "step", "forward", "decode", "wait", "process", "choose",
             "token_strip_html", "views", "token_views", "render_sidebar", "render_tools", "replay_pending",
             "sync_url", "install_export_script", "publish", "heartbeat", "show_chart", "plotly_chart",
             "topn_figure", "top_of_record", "style", "remember", "markdown", "metric", "caption",
             "open_section", "this_step", "sequence_logprob", "perplexity", "strip_legend", "pass_note",
             "_enqueue", "enqueue", "to_json", "generate_snippet", "loop_snippet", "prompt_box",
             "terms_here", "show", "explain", "latex", "gate", "read_on_load", "apply", "slider",
             "SerializeToString", "ByteSize")


def per_click_profile(stats: pstats.Stats, clicks: int, top: int) -> dict:
    """cProfile of the script runs: the functions with the most time of their own, and the cumulative time of
    the app's parts and Streamlit's element calls (ms per click; the profiler itself slows the run, so read
    the shares)."""
    total = max((ct for (_, _, name), (_, _, _, ct, _) in stats.stats.items() if name == "_run_script"), default=0.0)

    def where(path: str, line: int, name: str) -> str:
        short = path.split("site-packages/")[-1].replace(str(ROOT) + "/", "")
        return f"{short}:{line} {name}"

    rows = [(where(*key), nc, tt, ct) for key, (_, nc, tt, ct, _) in stats.stats.items()]
    own = sorted(rows, key=lambda r: -r[2])[:top]
    parts = sorted((r for r in rows if r[0].rsplit(" ", 1)[-1] in APP_PARTS
                    and ("autoreg" in r[0] or r[0].startswith(("pages/", "app.py", "streamlit/elements")))),
                   key=lambda r: -r[3])[:top * 2]

    def fmt(r):
        return {"function": r[0], "calls_per_click": round(r[1] / clicks, 1),
                "own_ms_per_click": round(r[2] * 1000 / clicks, 2),
                "cumulative_ms_per_click": round(r[3] * 1000 / clicks, 2),
                "share_of_run": round(r[3] / total, 3) if total else None}

    return {"clicks": clicks, "run_ms_per_click_profiled": round(total * 1000 / clicks, 1),
            "top_own_time": [fmt(r) for r in own], "app_and_element_calls": [fmt(r) for r in parts]}


def per_click_profile_file(path: Path, clicks: int, top: int = 25) -> dict:
    """``per_click_profile`` of a merged profile a server wrote (``bench.lib.in_server.run_profiler``)."""
    if not path.exists():
        return {"error": f"no profile written to {path}"}
    return {"file": str(path), **per_click_profile(pstats.Stats(str(path)), max(1, clicks), top)}


def profile_by_run_kind(folder: Path, top: int = 25) -> dict:
    """The servers' script runs by kind (count, CPU per run) and each kind's top functions by cumulative time."""
    runs: dict[str, list[float]] = {}
    for log in folder.glob("*.runs"):
        for line in log.read_text().splitlines():
            kind, _wall, cpu = line.split()
            runs.setdefault(kind, []).append(float(cpu))
    out = {kind: {"runs": len(cpus), "cpu_ms_median": round(statistics.median(cpus), 2),
                  "cpu_ms_mean": round(statistics.fmean(cpus), 2)} for kind, cpus in runs.items()}
    for kind in runs:
        files = sorted(str(f) for f in folder.glob(f"*-{kind}.prof"))
        if files:
            text = io.StringIO()
            pstats.Stats(*files, stream=text).sort_stats("cumulative").print_stats(top)
            (folder / f"{kind}.txt").write_text(text.getvalue())
            out[kind]["profile"] = str(folder / f"{kind}.txt")
    return out
