"""The "Under the hood" page's controller: what each section computes and keeps under a stamp.

Every computation runs behind a button, at the server's one measuring gate (``measuring.turn``), and is
kept in the tab's state stamped with the model and the text it was computed on, so a new token or prompt
never shows stale numbers. Functions that keep something take the state as a mapping. Nothing here draws:
the page (``page``) puts the sections on the screen.
"""
from __future__ import annotations

import math
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass
from functools import lru_cache

import torch

from autoreg_core.engine.attention import supports_attention
from autoreg_core.engine.tokens import sequence_text, single_token_view
from autoreg_core.experiments import batch_invariance as invariance
from autoreg_core.experiments import rope as positions
from autoreg_core.experiments import training_loss as loss
from autoreg_core.experiments.teacher_forcing import MAX_TOKENS
from autoreg_ui import keys as site_keys
from autoreg_ui import measuring
from autoreg_ui.app_files import app_folder
from autoreg_ui.lessons.hood import positions_text, text
from autoreg_ui.state import EXAMPLE_PROMPTS

MAX_READ = MAX_TOKENS  # the most recent tokens a section reads
LONG_PROMPT_PATH = app_folder() / "assets" / "long_prompt.txt"
SEARCH_STEPS_EACH, SEARCH_MAX_STEPS, SEARCH_BUDGET_S = 8, 48, 90.0  # the flip search's bounds


def mean_or_nan(values: list[float]) -> float:
    return loss.mean(values)


@lru_cache(maxsize=1)
def long_text() -> str:
    return LONG_PROMPT_PATH.read_text(encoding="utf-8").strip()


def other_rows(bundle) -> list[list[int]]:
    """The other tabs of a shared pass: the app's example prompts and the long example's opening (7 rows)."""
    rows = [list(bundle.tokenizer(p)["input_ids"]) for p in EXAMPLE_PROMPTS]
    rows.append(list(bundle.tokenizer(long_text())["input_ids"][:40]))
    return [[int(i) for i in r] for r in rows if len(r) >= 2]


def step_text(session) -> list[int]:
    """The text whose last token the learner's last step fed (the step that chose the last generated token read
    ``ids[:context_len]``); without steps, the whole text (the next step)."""
    return list(session.ids[:session.records[-1].context_len] if session.records else session.ids)


def step_cut(session) -> int:
    """The tokens section 3 recomputes the last step on when its text is longer than one pass reads, else 0 (it
    measures the step itself, at its own positions)."""
    return MAX_READ if len(step_text(session)) > MAX_READ else 0


def last_step(session) -> tuple[list[int], int | None]:
    """The last step's text, cut to the last ``MAX_READ`` tokens (``step_cut`` says when), and that step's index;
    without steps, the whole text (the next step) and None."""
    ids = step_text(session)
    if len(ids) < 2:
        raise ValueError(text.NOTHING_CACHED)
    return ids[-MAX_READ:], session.records[-1].index if session.records else None


def prompt_fills(total: int, scored: loss.TextLoss) -> int:
    """The tokens one pass read when the prompt alone filled them, so that none of the text's ``total`` tokens
    added after the prompt is scored; else 0."""
    return len(scored.ids) if not scored.generated_losses and total > len(scored.ids) else 0


def picks(records) -> tuple[int, int]:
    """Of these steps' tokens: how many were forced, and how many drawn below the model's top token (rank > 1)."""
    records = list(records)
    return sum(r.forced for r in records), sum(1 for r in records if not r.forced and r.rank > 1)


def recorded_gap(session) -> float:
    """The top-two logit gap of the last step, from its record: ln(p₁ / p₂) (the softmax keeps logit differences)."""
    if not session.records:
        return float("nan")
    probs = session.records[-1].top_probs
    return math.log(float(probs[0]) / float(probs[1])) if float(probs[1]) > 0 else float("inf")


def compute_and_keep(state: MutableMapping, job: site_keys.JobKeys, stamp: tuple, what: str,
                     compute: Callable[[], object]) -> str | None:
    """Run ``compute()`` at the measuring gate and keep its result with its stamp; the reason it could not run (a
    message to show), else None."""
    try:
        with measuring.turn(what):
            measuring.keep(state, job.kept, measuring.Kept(stamp, compute()))
    except (ValueError, measuring.Busy) as exc:
        return str(exc)
    return None


def kept_result(state: MutableMapping, job: site_keys.JobKeys, stamp: tuple):
    """The job's result kept for ``stamp`` (computed now or earlier), else None."""
    found = measuring.kept(state, job.kept, stamp)
    return None if found is None else found.result


def token_label(tokenizer, token_id: int) -> str:
    return single_token_view(tokenizer, int(token_id)).label


# ---------------------------------------------------------------- 1 · the training loss
NO_RECORD = text.NO_RECORD


def loss_rows(tokenizer, scored: loss.TextLoss, records) -> list[dict]:
    recorded = [-r.logprob for r in records]
    rows = []
    for t, (term, top) in enumerate(zip(scored.losses, scored.top_ids), start=1):
        step = t - scored.prompt_len
        kept = f"{recorded[step]:.5f}" if 0 <= step < len(recorded) else NO_RECORD
        rows.append({"token": t + 1, "text": token_label(tokenizer, scored.ids[t]),
                     "part": "prompt" if step < 0 else "generated", "−log p, one pass": round(term, 5),
                     # text, so a prompt token's empty cell reads "—" (a missing number is printed "None")
                     "−log p, recorded by the step": kept,
                     "model's own top guess": token_label(tokenizer, top)})
    return rows


# ---------------------------------------------------------------- 2 · positions
RECENT_STEPS = 8  # steps with a row of their own in the position table


def position_rows(tokenizer, session) -> list[dict]:
    """The prefill's positions, then one row per recent step: the token it fed and at which position."""
    rows = [{"pass": "prefill", "tokens fed": session.prompt_len, "position ids": f"0 … {session.prompt_len - 1}",
             "token fed": positions_text.NO_TOKEN}]  # many tokens: a dash, not the grey "None" of a missing cell
    earlier, recent = session.records[:-RECENT_STEPS], session.records[-RECENT_STEPS:]
    if earlier:  # folded into one row, so the ids run on without a gap
        first, last = (positions.step_positions(r.context_len, 1)[0] for r in (earlier[0], earlier[-1]))
        rows.append({"pass": text.earlier_steps(earlier[0].index, earlier[-1].index), "tokens fed": len(earlier),
                     "position ids": f"{first} … {last}" if last > first else str(first),
                     "token fed": positions_text.NO_TOKEN})
    for record in recent:
        rows.append({"pass": f"step {record.index}", "tokens fed": 1,
                     "position ids": str(positions.step_positions(record.context_len, 1)[0]),
                     "token fed": token_label(tokenizer, record.token_id)})
    return rows


def shift_rows(tokenizer, shifted: positions.Shifted) -> list[dict]:
    return [{"rank": i + 1, "right positions": token_label(tokenizer, a),
             "last token one late": token_label(tokenizer, b), "whole text shifted": token_label(tokenizer, c)}
            for i, (a, b, c) in enumerate(zip(shifted.top_right, shifted.top_last_off, shifted.top_all_off))]


def longer_row(bundle, ids: list[int]) -> list[int]:
    """Another tab's text, longer than this one: the long example, cut 16 tokens past this text's length."""
    return [int(i) for i in bundle.tokenizer(long_text())["input_ids"][:len(ids) + 16]]


def pad_rows(padded: positions.PaddedRows) -> list[dict]:
    return [{"row": name, "real tokens cached": n, "pad columns": padded.width - n,
             "position id the batcher feeds": own, "position if columns were counted": col}
            for name, n, own, col in zip(("your text", "a longer text"), padded.lengths, padded.own_positions,
                                         padded.column_positions)]


# ---------------------------------------------------------------- 3 · nondeterminism and batch invariance
def search_markdown(tokenizer, search: invariance.FlipSearch) -> str:
    from autoreg_ui.messages import plain

    flip = search.found
    if flip is None:
        return text.search_none(search.texts, search.steps, search.passes, search.stopped, search.smallest_gap,
                                search.largest_delta)
    return text.search_found(flip.rows, plain(token_label(tokenizer, flip.solo_top)),
                             plain(token_label(tokenizer, flip.batched_top)), flip.gap, flip.max_delta,
                             plain(sequence_text(tokenizer, flip.ids[-12:])))


# ---------------------------------------------------------------- positions: which kind this model has
ROTARY, LEARNED, NO_POSITIONS = "rotary", "learned", "none"


def position_table(model):
    """(the module, its row of position 0) of a learned position table: GPT-2's ``wpe``, OPT's
    ``embed_positions`` (whose rows start 2 further on, its ``offset``); None for a model without one."""
    for name, module in model.named_modules():
        if name.endswith(("wpe", "embed_positions")) and isinstance(module, torch.nn.Embedding):
            return module, int(getattr(module, "offset", 0))
    return None


def positions_kind(model) -> str:
    """How the model tells positions apart, read from its modules: a learned table added to the input, a rotary
    embedding applied to queries and keys, or neither (the causal mask alone)."""
    if position_table(model) is not None:
        return LEARNED
    if any(name.endswith("rotary_emb") for name, _ in model.named_modules()):
        return ROTARY
    return NO_POSITIONS


def key_check_applies(model) -> bool:
    """The cached-key check recomputes a key with the layer's own projection (separate or fused) and the family's
    own rotation (of the whole head, or of its first part): any rotary model whose layers the attention
    recomputation can read."""
    return positions_kind(model) == ROTARY and supports_attention(model)


def key_check_projection(model) -> str:
    """How the page names the recomputed key: Llama's separate ``k_proj``, or the key part of a fused projection."""
    layers = getattr(getattr(model, "model", None), "layers", None)
    attn = getattr(layers[0], "self_attn", None) if layers is not None and len(layers) else None
    return "k_proj(norm(h))" if hasattr(attn, "k_proj") else "the key part of the fused q/k/v projection of norm(h)"


@dataclass(frozen=True)
class PositionVector:
    """One row of a learned position table, beside the next row and the token embeddings it is added to."""

    position: int
    rows: int  # positions the table has
    width: int  # numbers per row (the hidden size)
    norm: float  # |p_pos|
    next_cosine: float | None  # cos(p_pos, p_pos+1); None at the last row
    token_norm: float  # the token embeddings' mean length


def position_vector(model, position: int) -> PositionVector:
    """Row ``position`` of the model's learned position table, read from its weights."""
    table, offset = position_table(model)
    weight = table.weight.detach().float()
    rows = int(weight.shape[0]) - offset
    if not 0 <= position < rows:
        raise ValueError(f"Position {position:,} is outside the table (0–{rows - 1:,}).")
    row = weight[offset + position]
    nxt = None
    if position + 1 < rows:
        nxt = float(torch.nn.functional.cosine_similarity(row, weight[offset + position + 1], dim=0))
    tokens = model.get_input_embeddings().weight.detach().float()
    project_in = next((m for name, m in model.named_modules() if name.endswith("project_in") and m is not None), None)
    if project_in is not None:  # OPT-350m: the position vector is added to the embedding projected to the hidden size
        with torch.no_grad():
            tokens = project_in(tokens.to(project_in.weight.dtype)).float()
    return PositionVector(position, rows, int(weight.shape[1]), float(row.norm()), nxt,
                          float(tokens.norm(dim=1).mean()))
