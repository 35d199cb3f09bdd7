"""Beam search on the KV cache, written out so every candidate can be drawn as a tree.

The algorithm is transformers' own (``GenerationMixin._beam_search`` in 5.x), for one prompt:

* the B running beams sit in one batch on one ``DynamicCache``; each decode step feeds the B
  last tokens in one forward pass;
* every beam's log-probabilities are added to its running sum, and the best
  ``K = max(2, 1 + #EOS) · B`` (beam, token) pairs over all beams are the step's candidates;
* candidates that end (EOS or the length budget) go to the finished list, scored
  ``sum log p / length ** length_penalty``; the best B that did not end keep running;
* the cache rows are reordered to follow the surviving beams (``DynamicCache.reorder_cache``);
* the search stops when no running beam can beat the worst finished one (generate's
  ``early_stopping=False`` heuristic) or when the budget is reached.

Its best beam equals ``model.generate(num_beams=B, do_sample=False, length_penalty=…)``.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import torch
from transformers import DynamicCache, LogitsProcessorList

from .loading import ModelBundle

MAX_BEAMS = 8
MAX_BEAM_STEPS = 64
NEG = -1.0e9  # generate's "impossible" score

KEPT, FINISHED, PRUNED = "kept", "finished", "pruned"


@dataclass
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


@dataclass
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


@dataclass
class BeamResult:
    num_beams: int
    max_new_tokens: int
    length_penalty: float
    nodes: list[BeamNode]
    beams: list[Beam]  # ranked, best first
    steps: int  # decode steps the search ran
    forward_passes: int
    time_ms: float
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


def clone_cache(cache: DynamicCache, config=None) -> DynamicCache:
    """A deep copy of a cache's K and V tensors (the session's own cache is never touched)."""
    data = [(layer.keys.clone(), layer.values.clone()) for layer in cache.layers]
    return DynamicCache(data, config=config)


def prefill_context(bundle: ModelBundle, context_ids: list[int]) -> tuple[DynamicCache, torch.Tensor]:
    """One prefill of the context: its cache and the logits for the next token."""
    cache = DynamicCache(config=bundle.config)
    ids = torch.tensor([list(context_ids)], dtype=torch.long, device=bundle.device)
    with torch.inference_mode():
        out = bundle.model(input_ids=ids, past_key_values=cache, use_cache=True)
    return out.past_key_values, out.logits[0, -1].float().cpu()


def _forward(bundle: ModelBundle, tokens: torch.Tensor, cache: DynamicCache) -> torch.Tensor:
    with torch.inference_mode():
        out = bundle.model(input_ids=tokens.to(bundle.device), past_key_values=cache, use_cache=True)
    return out.logits[:, -1].float().cpu()


def beam_search(bundle: ModelBundle, context_ids: list[int], num_beams: int = 3, max_new_tokens: int = 8,
                length_penalty: float = 1.0, early_stopping: bool | str = False,
                eos_token_ids: list[int] | None = None, cache: DynamicCache | None = None,
                first_logits: torch.Tensor | None = None, processors: LogitsProcessorList | None = None,
                with_greedy: bool = True,
                on_step: Callable[[BeamResult], None] | None = None) -> BeamResult:
    """Beam search from ``context_ids``; returns the tree of candidates and the ranked beams.

    ``cache`` + ``first_logits`` (a session's KV cache and pending logits) skip the prefill; the
    cache is copied, never modified. ``on_step`` gets the partial result after each step.
    """
    num_beams = int(num_beams)
    max_new_tokens = int(max_new_tokens)
    if not 1 <= num_beams <= MAX_BEAMS:
        raise ValueError(f"Beam width must lie between 1 and {MAX_BEAMS}.")
    if not 1 <= max_new_tokens <= MAX_BEAM_STEPS:
        raise ValueError(f"Steps must lie between 1 and {MAX_BEAM_STEPS}.")
    eos = list(bundle.eos_token_ids if eos_token_ids is None else eos_token_ids)
    processors = processors or LogitsProcessorList()
    t0 = time.perf_counter()
    callback_ms = 0.0  # time spent in on_step (drawing), left out of the measured search time
    forwards = 0
    if cache is None or first_logits is None:
        cache, first_logits = prefill_context(bundle, context_ids)
        forwards += 1
    else:
        cache = clone_cache(cache, bundle.config)
    base_cache = clone_cache(cache, bundle.config) if with_greedy else None

    B = num_beams
    K = max(2, 1 + len(eos)) * B  # candidates per step, as generate keeps
    vocab = int(first_logits.shape[-1])
    eos_t = torch.tensor(eos, dtype=torch.long)
    prompt = torch.tensor(list(context_ids), dtype=torch.long)

    # running beams
    run_seqs = prompt.unsqueeze(0).repeat(B, 1)  # [B, L]
    run_scores = torch.zeros(B, dtype=torch.float32)
    run_scores[1:] = NEG  # only beam 0 is real at the start (all beams hold the same prefix)
    run_nodes = [0] * B
    # finished hypotheses
    fin_scores = torch.full((B,), NEG, dtype=torch.float32)
    fin_done = torch.zeros(B, dtype=torch.bool)
    fin_items: list[tuple[list[int], float, int, bool] | None] = [None] * B
    improvable = True

    root = BeamNode(id=0, parent=-1, token_id=-1, step=0, logprob=0.0, cum_logprob=0.0, status=KEPT)
    nodes: list[BeamNode] = [root]
    node_cum: dict[int, float] = {0: 0.0}
    result = BeamResult(num_beams=B, max_new_tokens=max_new_tokens, length_penalty=float(length_penalty),
                        nodes=nodes, beams=[], steps=0, forward_passes=forwards, time_ms=0.0)

    logits = first_logits.float().view(1, -1).expand(B, vocab)
    cache_rows = 1  # the cache holds one row until the first reorder
    for step in range(1, max_new_tokens + 1):
        log_probs = torch.log_softmax(logits, dim=-1)
        log_probs = processors(run_seqs, log_probs)
        acc = (log_probs + run_scores[:, None]).reshape(-1)
        top_vals, top_idx = torch.topk(acc, k=min(K, acc.numel()))
        beam_of = top_idx // vocab
        tok_of = top_idx % vocab
        is_eos = torch.isin(tok_of, eos_t) if eos else torch.zeros_like(tok_of, dtype=torch.bool)
        hits = is_eos | torch.tensor(step >= max_new_tokens)
        # e. the best B candidates that did not end keep running
        running_vals = top_vals + hits.float() * NEG
        nxt = torch.topk(running_vals, k=B).indices
        # f. candidates among the top B that ended enter the finished list (length-penalised)
        in_top_b = torch.arange(top_vals.numel()) < B
        just_done = hits & in_top_b
        cand_scores = top_vals / (float(step) ** length_penalty)
        if early_stopping is True and bool(fin_done.all()):
            cand_scores = cand_scores + NEG
        if not improvable:
            cand_scores = cand_scores + NEG
        cand_scores = cand_scores + (~just_done).float() * NEG
        merged = torch.cat([fin_scores, cand_scores])
        merged_done = torch.cat([fin_done, just_done])
        keep = torch.topk(merged, k=B).indices

        # record the candidates in the tree
        cand_node = []
        kept_set = {int(i) for i in nxt if not bool(hits[int(i)])}
        finished_set = {int(i) - B for i in keep if int(i) >= B and bool(merged_done[int(i)])}
        for j in range(top_vals.numel()):
            parent = run_nodes[int(beam_of[j])]
            if float(top_vals[j]) < NEG / 2:  # a dead beam's continuation
                cand_node.append(-1)
                continue
            status = KEPT if j in kept_set else FINISHED if j in finished_set else PRUNED
            lp = float(top_vals[j]) - node_cum[parent]
            node = BeamNode(id=len(nodes), parent=parent, token_id=int(tok_of[j]), step=step,
                            logprob=lp, cum_logprob=float(top_vals[j]), status=status, rank=j,
                            score=float(top_vals[j]) / (float(step) ** length_penalty) if status == FINISHED else None,
                            ends_with_eos=bool(is_eos[j]))
            nodes.append(node)
            node_cum[node.id] = node.cum_logprob
            cand_node.append(node.id)

        # update the finished list
        new_items = []
        for i in keep.tolist():
            if i < B:
                new_items.append(fin_items[i])
            elif bool(merged_done[i]):
                j = i - B
                seq = run_seqs[int(beam_of[j]), len(prompt):].tolist() + [int(tok_of[j])]
                new_items.append((seq, float(top_vals[j]), cand_node[j], bool(is_eos[j])))
            else:
                new_items.append(None)
        fin_items = new_items
        fin_scores = merged[keep]
        fin_done = merged_done[keep]

        # the new running beams
        src_beams = beam_of[nxt]
        run_seqs = torch.cat([run_seqs[src_beams], tok_of[nxt].unsqueeze(1)], dim=1)
        run_scores = running_vals[nxt]
        run_nodes = [cand_node[int(j)] if cand_node[int(j)] >= 0 else 0 for j in nxt]

        # the early-stop heuristic (generate's early_stopping=False / "never")
        if early_stopping == "never" and length_penalty > 0.0:
            best_len = max_new_tokens
        else:
            best_len = step
        best_possible = run_scores[0] / (float(best_len) ** length_penalty)
        worst_finished = torch.where(fin_done, fin_scores.min(), torch.tensor(NEG))
        improvable = improvable and bool((best_possible > worst_finished).any())
        result.steps = step
        go_on = improvable and not (bool(fin_done.all()) and early_stopping is True) and not bool(hits.all())
        if on_step is not None:
            result.beams = _ranked(fin_items, fin_scores, length_penalty)
            t_cb = time.perf_counter()
            result.time_ms = (t_cb - t0) * 1000.0 - callback_ms
            on_step(result)
            callback_ms += (time.perf_counter() - t_cb) * 1000.0
        if not go_on:
            result.stopped_early = step < max_new_tokens
            break
        # g. reorder the cache to follow the surviving beams, then one forward for all of them
        if cache_rows == 1:
            cache.batch_repeat_interleave(B)
            cache_rows = B
        cache.reorder_cache(src_beams.to(torch.long))
        logits = _forward(bundle, tok_of[nxt].view(B, 1), cache)
        forwards += 1
        result.forward_passes = forwards

    result.beams = _ranked(fin_items, fin_scores, length_penalty)
    result.forward_passes = forwards
    result.time_ms = (time.perf_counter() - t0) * 1000.0 - callback_ms
    if with_greedy:
        g0 = time.perf_counter()
        ids, lps, n_fwd = greedy_path(bundle, base_cache, first_logits, max_new_tokens, eos)
        result.greedy_ids, result.greedy_logprobs = ids, lps
        result.greedy_time_ms = (time.perf_counter() - g0) * 1000.0
        result.forward_passes = forwards + n_fwd
    return result


def _ranked(items, scores: torch.Tensor, length_penalty: float) -> list[Beam]:
    beams = []
    for item, score in zip(items, scores.tolist()):
        if item is None or score < NEG / 2:
            continue
        seq, cum, node_id, eos = item
        beams.append(Beam(token_ids=seq, cum_logprob=cum, score=float(score), node_id=node_id, ends_with_eos=eos))
    beams.sort(key=lambda b: -b.score)
    return beams


def greedy_path(bundle: ModelBundle, cache: DynamicCache, first_logits: torch.Tensor, max_new_tokens: int,
                eos: list[int]) -> tuple[list[int], list[float], int]:
    """Argmax decoding on (a copy of) the cache: the path greedy would take. Stops at EOS."""
    ids, lps = [], []
    logits = first_logits.float().view(1, -1)
    forwards = 0
    for step in range(max_new_tokens):
        log_probs = torch.log_softmax(logits[0].double(), dim=-1)
        token = int(torch.argmax(logits[0]))
        ids.append(token)
        lps.append(float(log_probs[token]))
        if token in eos or step == max_new_tokens - 1:
            break
        logits = _forward(bundle, torch.tensor([[token]], dtype=torch.long), cache)
        forwards += 1
    return ids, lps, forwards
