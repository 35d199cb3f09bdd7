"""The class record: what a class did, as one JSON document, one CSV table and a section of the hand-out.

A class is deleted when it ends, so the teacher takes its record first. It holds the teacher's steps, every
question with the class's scored tokens (never the text a student typed), the model's probabilities, ranks and
points, the leaderboard when it was on, and every sampling round with its draws and its tree's counts.
Students are "student 1, 2, …" (the order they joined) unless nicknames were on; questions and rounds are
numbered per class from 1 (the store's ids are server-wide). No Streamlit: tests build records from a store.
"""
from __future__ import annotations

import csv
import html
import io
import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

import pandas as pd

from autoreg_core.engine.replay import config_from_dict
from autoreg_core.experiments import continuation_tree as prefix_tree
from autoreg_server.class_store import ClassInfo, ClassReads, Student
from autoreg_ui.classroom import text

CSV_COLUMNS = ["part", "number", "after step", "who", "token", "probability", "rank", "points", "temperature",
               "count"]


def nicknames(students: Sequence[Student], names_on: bool) -> dict[str, str]:
    """What the projector and the record call each student: their nickname only while "Show nicknames" is on,
    else a number (the order they joined in)."""
    return {s.student: (s.nickname if names_on and s.nickname else text.ANONYMOUS.format(n=i + 1))
            for i, s in enumerate(students)}


def class_record(store: ClassReads, info: ClassInfo, steps: Sequence, label: Callable[[int], str],
                 model: str = "", prompt: str = "") -> dict:
    """The whole class as plain data. ``steps`` are the teacher's step records (``index``, ``token_id``,
    ``prob``, ``rank``, ``forced``); ``label`` names a token id the way the pages do."""
    code = info.code
    who = nicknames(store.students(code), info.names_on)
    questions = []
    for number, q in enumerate(store.questions(code), start=1):
        chosen = q.model or {}
        guesses = [{"who": who.get(g.student, "—"), "scored token": label(g.token), "tokens in the guess": g.tokens,
                    "probability": g.prob, "rank": g.rank, "points": round(g.score, 1)}
                   for g in store.guesses(code, q.id)]
        questions.append({"question": number, "after step": q.step, "revealed": q.revealed is not None,
                          "model drew": chosen.get("choice_label"), "model probability": chosen.get("prob"),
                          "model rank": chosen.get("rank"), "guesses": guesses})
    board = None
    if info.leaderboard:
        board = [{"who": who.get(s, "—"), "points": round(v, 1)}
                 for s, v in sorted(store.scores(code).items(), key=lambda r: -r[1])]
    rounds = []
    for number, r in enumerate(store.rounds(code), start=1):
        draws = store.draws(code, r.id)
        branches = prefix_tree.merge([d.tokens for d in draws])
        rounds.append({
            "round": number, "after step": r.step, "tokens per student": r.tokens,
            "temperature": float(config_from_dict(r.config).temperature),
            "draws": [{"who": who.get(d.student, "—"), "seed": d.seed, "tokens": [label(t) for t in d.tokens]}
                      for d in draws],
            "tree": [{"path": [label(int(t)) for t in b.id.split("/")], "count": b.count} for b in branches],
            "different first tokens": prefix_tree.distinct_at(branches, 1),
            "share of the most common first token": round(prefix_tree.top_share(branches, len(draws)), 3),
            "different draws": len({d.tokens for d in draws})})
    return {"class": code, "model": model, "made": f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC", "prompt": prompt,
            "nicknames shown": info.names_on, "leaderboard on": info.leaderboard,
            "steps": [{"step": s.index, "token": label(s.token_id), "probability": float(s.prob), "rank": int(s.rank),
                       "forced": bool(s.forced)} for s in steps],
            "questions": questions, "leaderboard": board, "rounds": rounds}


def record_json(record: dict) -> str:
    return json.dumps(record, ensure_ascii=False, indent=1)


def record_rows(record: dict) -> list[list]:
    """The record as one long table (``CSV_COLUMNS``): one row per step, question, guess, leaderboard line,
    round, draw and tree branch; ``part`` says which."""
    rows: list[list] = []
    for s in record["steps"]:
        rows.append(["step", s["step"], s["step"] - 1, "", s["token"], s["probability"], s["rank"], "", "", ""])
    for q in record["questions"]:
        rows.append(["question", q["question"], q["after step"], "model", q["model drew"] or "",
                     q["model probability"] if q["model probability"] is not None else "", q["model rank"] or "", "",
                     "", len(q["guesses"])])
        for g in q["guesses"]:
            rows.append(["guess", q["question"], q["after step"], g["who"], g["scored token"], g["probability"],
                         g["rank"], g["points"], "", g["tokens in the guess"]])
    for line in record["leaderboard"] or []:
        rows.append(["leaderboard", "", "", line["who"], "", "", "", line["points"], "", ""])
    for r in record["rounds"]:
        rows.append(["round", r["round"], r["after step"], "", "", "", "", "", r["temperature"], len(r["draws"])])
        for d in r["draws"]:
            rows.append(["draw", r["round"], r["after step"], d["who"], "".join(d["tokens"]), "", "", "",
                         r["temperature"], 1])
        for b in r["tree"]:
            rows.append(["branch", r["round"], r["after step"], "", " | ".join(b["path"]), "", "", "",
                         r["temperature"], b["count"]])
    return rows


def record_csv(record: dict) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    writer.writerows(record_rows(record))
    return out.getvalue()


def record_html(record: dict) -> str:
    """The record as a section of the offline hand-out: every cell escaped (tokens and nicknames are typed or
    drawn, never markup)."""
    def table(rows: list[dict]) -> str:
        return pd.DataFrame(rows).to_html(index=False, escape=True) if rows else ""

    parts = [f"<h2>{html.escape(text.RECORD_HEADER.format(code=record['class']))}</h2>",
             f'<p class="note">{html.escape(text.record_note(record["nicknames shown"]))}</p>']
    for q in record["questions"]:
        head = text.record_question(q["question"], q["after step"], q["model drew"], q["model probability"],
                                    q["model rank"])
        parts += [f"<h3>{html.escape(head)}</h3>", table(q["guesses"]) or f"<p>{html.escape(text.NO_GUESSES)}</p>"]
    if record["leaderboard"] is not None:
        parts += [f"<h3>{html.escape(text.BOARD_HEADER)}</h3>", table(record["leaderboard"])]
    for r in record["rounds"]:
        head = text.record_round(r["round"], r["after step"], r["temperature"], len(r["draws"]),
                                 r["tokens per student"])
        parts += [f"<h3>{html.escape(head)}</h3>",
                  table([{"who": d["who"], "seed": d["seed"], "draw": "".join(d["tokens"])} for d in r["draws"]]),
                  table([{"branch": " | ".join(b["path"]), "draws": b["count"]} for b in r["tree"]])]
    return "".join(parts)


def with_record(handout: str, record: dict) -> str:
    """The hand-out page with the class record as its last section."""
    head, end, tail = handout.rpartition("</body>")
    return f"{head}{record_html(record)}{end}{tail}" if end else handout + record_html(record)


def record_name(code: str, ext: str) -> str:
    return f"autoreg-class-{code}.{ext}"
