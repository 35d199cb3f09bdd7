"""Beam search on the KV cache, as a pure step plus a short loop, so every candidate can be drawn as a tree.

The algorithm is transformers' own (``GenerationMixin._beam_search``), for one prompt:

* the B running beams sit in one batch on one ``DynamicCache``; each step feeds their B last
  tokens in one ``decode.forward``;
* every beam's log-probabilities (``decode.log_probs``) are added to its running sum, and the best
  ``K = max(2, 1 + #EOS) · B`` (beam, token) pairs over all beams are the step's candidates;
* running beams are ranked by that raw sum: the best B candidates that did not end run on;
* candidates among the top B that end (EOS or the last step) enter the finished list, scored
  ``sum log p / length ** length_penalty``; it keeps the best B;
* the cache rows are reordered to follow the surviving beams (``DynamicCache.reorder_cache``);
* the search stops when no running beam can beat the worst finished one (generate's
  ``early_stopping=False`` heuristic) or when the budget is reached.

``beam_step`` is that step on plain tensors (no model); ``beam_search`` is the loop around it. Its
best beam equals ``model.generate(num_beams=B, do_sample=False, length_penalty=…)``.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import torch

from autoreg_core.engine import decode
from autoreg_core.engine.config import SamplingConfig
from autoreg_core.engine.loading import ModelBundle
from autoreg_core.engine.loop import generation_loop
from autoreg_core.engine.prefix import Prefix

MAX_BEAMS = 8
MAX_BEAM_STEPS = 64
NEG = -1.0e9  # generate's "impossible" score

KEPT, FINISHED, PRUNED = "kept", "finished", "pruned"


@dataclass(frozen=True)
class BeamSettings:
    """What ``generate(num_beams=…)`` is told; ``eos_token_ids`` None means the model's own."""

    num_beams: int = 3
    max_new_tokens: int = 8
    length_penalty: float = 1.0
    early_stopping: bool | str = False  # generate's values: False, True or "never"
    repetition_penalty: float = 1.0
    eos_token_ids: tuple[int, ...] | None = None

    def checked(self) -> BeamSettings:
        if not 1 <= int(self.num_beams) <= MAX_BEAMS:
            raise ValueError(f"Beam width must lie between 1 and {MAX_BEAMS}.")
        if not 1 <= int(self.max_new_tokens) <= MAX_BEAM_STEPS:
            raise ValueError(f"Steps must lie between 1 and {MAX_BEAM_STEPS}.")
        return replace(self, num_beams=int(self.num_beams), max_new_tokens=int(self.max_new_tokens),
                       length_penalty=float(self.length_penalty))


@dataclass(frozen=True)
class BeamNode:
    """One candidate (beam + next token) that the search looked at."""

    id: int
    parent: int  # node id; 0 is the root (the context)
    token_id: int
    step: int  # 1-based decode step; 0 for the root
    logprob: float  # log p(token | the beam's prefix), natural log
    cum_logprob: float  # sum of log-probs from the root to this node
    status: str  # "kept" (runs on), "finished" (entered the finished list), "pruned"
    rank: int = 0  # rank among this step's candidates (0 = best)
    score: float | None = None  # length-penalised score, for finished candidates
    ends_with_eos: bool = False


@dataclass(frozen=True)
class Beam:
    """A finished hypothesis."""

    token_ids: list[int]
    cum_logprob: float
    score: float  # cum_logprob / len ** length_penalty
    node_id: int
    ends_with_eos: bool

    @property
    def length(self) -> int:
        return len(self.token_ids)


@dataclass(frozen=True)
class BeamState:
    """Everything between two steps: the running beams and the finished hypotheses."""

    settings: BeamSettings
    eos: torch.Tensor  # long [#EOS]
    seqs: torch.Tensor  # long [B, L]: each running beam's ids, context included
    scores: torch.Tensor  # float [B]: each running beam's sum of log-probs (NEG: no beam there)
    beam_nodes: tuple[int, ...]  # the tree node each running beam ends on
    parents: torch.Tensor  # long [B]: the row each running beam came from (to reorder the cache)
    finished_scores: torch.Tensor  # float [B]: length-penalised; NEG for an empty slot
    finished: tuple[Beam | None, ...]  # aligned with ``finished_scores``
    context_len: int
    step: int = 0
    node_count: int = 1  # the root is node 0
    improvable: bool = True  # a running beam may still beat the worst finished one
    running: bool = True  # the search goes on

    @property
    def last_tokens(self) -> torch.Tensor:
        return self.seqs[:, -1:]

    def ranked(self) -> list[Beam]:
        """The finished hypotheses, best first."""
        beams = [b for b, s in zip(self.finished, self.finished_scores.tolist()) if b is not None and s > NEG / 2]
        return sorted(beams, key=lambda b: -b.score)


def start(context_ids, settings: BeamSettings, eos_token_ids) -> BeamState:
    """B copies of the context; only beam 0 is real at first (the others score NEG), as in generate."""
    b = settings.num_beams
    scores = torch.zeros(b)
    scores[1:] = NEG
    return BeamState(settings=settings, eos=torch.tensor(list(eos_token_ids), dtype=torch.long),
                     seqs=torch.tensor([list(context_ids)] * b, dtype=torch.long), scores=scores,
                     beam_nodes=(0,) * b, parents=torch.zeros(b, dtype=torch.long),
                     finished_scores=torch.full((b,), NEG), finished=(None,) * b, context_len=len(context_ids))


@dataclass(frozen=True)
class _Candidates:
    """The top K (beam, token) pairs of one step, best first."""

    sums: torch.Tensor  # float [K]: the beam's sum of log-probs with this token
    beam: torch.Tensor  # long [K]: which running beam
    token: torch.Tensor  # long [K]
    eos: torch.Tensor  # bool [K]
    ends: torch.Tensor  # bool [K]: EOS or the last step


def _candidates(state: BeamState, log_probs: torch.Tensor, step: int) -> _Candidates:
    vocab = log_probs.shape[-1]
    total = (log_probs + state.scores[:, None]).reshape(-1)
    k = min(max(2, 1 + state.eos.numel()) * state.settings.num_beams, total.numel())
    sums, idx = torch.topk(total, k=k)
    token = idx % vocab
    eos = torch.isin(token, state.eos)
    return _Candidates(sums, idx // vocab, token, eos, eos | (step >= state.settings.max_new_tokens))


def _finish(state: BeamState, cand: _Candidates, step: int) -> tuple[torch.Tensor, torch.Tensor]:
    """generate's update of the finished list: (new finished scores, indices into old + candidates)."""
    s = state.settings
    b = s.num_beams
    scores = cand.sums / (float(step) ** s.length_penalty)
    full = bool((state.finished_scores > NEG / 2).all()) and s.early_stopping is True
    just_done = cand.ends & (torch.arange(cand.sums.numel()) < b)  # only the top B may finish
    scores = scores + float(full) * NEG + float(not state.improvable) * NEG + (~just_done).float() * NEG
    merged = torch.cat([state.finished_scores, scores])
    keep = torch.topk(merged, k=b).indices
    return merged[keep], keep


def _still_improvable(state: BeamState, run_scores: torch.Tensor, fin_scores: torch.Tensor, step: int) -> bool:
    """generate's early-stop heuristic: can the best running beam beat the worst finished one?"""
    s = state.settings
    length = s.max_new_tokens if s.early_stopping == "never" and s.length_penalty > 0.0 else step
    best_possible = run_scores[0] / (float(length) ** s.length_penalty)
    worst = fin_scores.min() if bool((fin_scores > NEG / 2).all()) else torch.tensor(NEG)
    return state.improvable and bool(best_possible > worst)


def _nodes(state: BeamState, cand: _Candidates, runs_on: set[int], finishes: set[int], step: int) -> list[BeamNode]:
    """The step's candidates as tree nodes (a dead beam's continuations are left out)."""
    out = []
    for j in range(cand.sums.numel()):
        total, beam = float(cand.sums[j]), int(cand.beam[j])
        if total < NEG / 2:
            continue
        status = KEPT if j in runs_on else FINISHED if j in finishes else PRUNED
        score = total / float(step) ** state.settings.length_penalty if status == FINISHED else None
        out.append(BeamNode(id=state.node_count + len(out), parent=state.beam_nodes[beam],
                            token_id=int(cand.token[j]), step=step, logprob=total - float(state.scores[beam]),
                            cum_logprob=total, status=status, rank=j, score=score, ends_with_eos=bool(cand.eos[j])))
    return out


def beam_step(state: BeamState, log_probs: torch.Tensor) -> tuple[BeamState, list[BeamNode]]:
    """One step on the running beams' log-probs [B, vocab]: the next state and the tree's new nodes."""
    step, b = state.step + 1, state.settings.num_beams
    cand = _candidates(state, log_probs, step)
    running_sums = cand.sums + cand.ends.float() * NEG  # an ended candidate cannot run on
    nxt = torch.topk(running_sums, k=b).indices
    fin_scores, keep = _finish(state, cand, step)
    n_old = len(state.finished)
    slots = keep.tolist()
    finishes = {i - n_old: slot for slot, i in enumerate(slots) if i >= n_old and float(fin_scores[slot]) > NEG / 2}
    runs_on = {int(j) for j in nxt if not bool(cand.ends[int(j)])}
    nodes = _nodes(state, cand, runs_on, set(finishes), step)
    node_of = {n.rank: n.id for n in nodes}
    finished = tuple(state.finished[i] if i < n_old
                     else _hypothesis(state, cand, i - n_old, float(fin_scores[slot]), node_of[i - n_old])
                     if i - n_old in finishes else None
                     for slot, i in enumerate(slots))
    run_scores = running_sums[nxt]
    improvable = _still_improvable(state, run_scores, fin_scores, step)
    all_full = bool((fin_scores > NEG / 2).all()) and state.settings.early_stopping is True
    new = replace(state, seqs=torch.cat([state.seqs[cand.beam[nxt]], cand.token[nxt].view(-1, 1)], dim=1),
                  scores=run_scores, beam_nodes=tuple(node_of.get(int(j), 0) for j in nxt), parents=cand.beam[nxt],
                  finished_scores=fin_scores, finished=finished, step=step, node_count=state.node_count + len(nodes),
                  improvable=improvable, running=improvable and not all_full and not bool(cand.ends.all()))
    return new, nodes


def _hypothesis(state: BeamState, cand: _Candidates, j: int, score: float, node_id: int) -> Beam:
    """Candidate ``j`` as a finished hypothesis (its ids without the context)."""
    ids = state.seqs[int(cand.beam[j]), state.context_len:].tolist() + [int(cand.token[j])]
    return Beam(ids, float(cand.sums[j]), score, node_id, bool(cand.eos[j]))


@dataclass
class BeamResult:
    settings: BeamSettings
    nodes: list[BeamNode]
    beams: list[Beam]  # ranked, best first
    steps: int = 0  # decode steps the search ran
    forward_passes: int = 0  # this call's decode passes (the prefix's prefill is not counted)
    time_ms: float = 0.0
    greedy_ids: list[int] = field(default_factory=list)
    greedy_logprobs: list[float] = field(default_factory=list)
    greedy_time_ms: float = 0.0
    stopped_early: bool = False

    @property
    def best(self) -> Beam:
        return self.beams[0]

    def path(self, node_id: int) -> list[int]:
        """Node ids from the first step down to ``node_id``."""
        by_id = {n.id: n for n in self.nodes}
        out = []
        while node_id != 0:
            out.append(node_id)
            node_id = by_id[node_id].parent
        return out[::-1]


ROOT = BeamNode(id=0, parent=-1, token_id=-1, step=0, logprob=0.0, cum_logprob=0.0, status=KEPT)


def beam_search(bundle: ModelBundle, prefix: Prefix, settings: BeamSettings, with_greedy: bool = True,
                on_step: Callable[[BeamResult], None] | None = None) -> BeamResult:
    """Beam search from ``prefix``: the tree of candidates and the ranked beams (``on_step`` sees each step).

    The prefix's cache is copied, never modified; drawing time in ``on_step`` is left out of ``time_ms``.
    """
    settings = settings.checked()
    eos = bundle.eos_token_ids if settings.eos_token_ids is None else settings.eos_token_ids
    scoring = SamplingConfig(repetition_penalty=settings.repetition_penalty)
    t0, drawing_ms = time.perf_counter(), 0.0
    state = start(prefix.ids, settings, eos)
    result = BeamResult(settings, nodes=[ROOT], beams=[])
    cache = decode.copy_cache(prefix.cache, bundle)
    logits = prefix.logits.float().view(1, -1).expand(settings.num_beams, -1)
    while True:
        state, nodes = beam_step(state, decode.log_probs(logits, state.seqs, scoring))
        result.nodes.extend(nodes)
        result.steps, result.beams = state.step, state.ranked()
        if on_step is not None:
            t_draw = time.perf_counter()
            result.time_ms = (t_draw - t0) * 1000.0 - drawing_ms
            on_step(result)
            drawing_ms += (time.perf_counter() - t_draw) * 1000.0
        if not state.running:
            break
        if state.step == 1:
            cache.batch_repeat_interleave(settings.num_beams)  # the context's one row becomes B rows
        cache.reorder_cache(state.parents)
        logits = decode.forward(bundle, state.last_tokens, cache).logits
        result.forward_passes += 1
    result.stopped_early = state.step < settings.max_new_tokens
    result.time_ms = (time.perf_counter() - t0) * 1000.0 - drawing_ms
    if with_greedy:
        g0 = time.perf_counter()
        result.greedy_ids, result.greedy_logprobs, n = greedy_path(bundle, prefix, settings.max_new_tokens, eos)
        result.greedy_time_ms = (time.perf_counter() - g0) * 1000.0
        result.forward_passes += n
    return result


def greedy_path(bundle: ModelBundle, prefix: Prefix, max_new_tokens: int, eos) -> tuple[list[int], list[float], int]:
    """Greedy decoding (the engine's one loop, at temperature 0) on a copy of the prefix's cache; stops at EOS.

    Returns the ids, their log-probs and the number of forward passes.
    """
    cache = decode.copy_cache(prefix.cache, bundle)
    steps = list(generation_loop(bundle, cache, list(prefix.ids), prefix.logits, max_new_tokens, eos=set(eos)))
    ids = [s.token for s in steps]
    return ids, [decode.logprob_of(s.logits, s.token) for s in steps], len(steps) - 1
