"""How far a batched decode pass's logits lie from a solo pass's, on the embedded model.

    python -m bench.batch_exactness                  # 8 tabs, 24 greedy steps each, 1 torch thread
    python -m bench.batch_exactness --steps 48 --threads 2

Eight tabs (threads), each with its own prompt of a different length and its own KV cache, step greedily
through one ``DecodeBatcher`` at once: started together, then interleaved however their passes fall. Tab i
takes ``steps - 2·i`` steps (at least 1), so tabs drop out one by one and the passes carry 8 rows down to 1,
over caches of different lengths (left-padded). Every step's
logits are kept. Then each tab is stepped again alone on a fresh cache, fed the same tokens by plain solo
passes (``decode.forward``, one row), and the logits of every step are compared with the batched ones.

Prints one JSON object: the largest absolute logit difference, the largest relative one (that step's
largest |difference| over its largest |solo logit|), where the largest was (tab, step, rows in its pass),
how many steps were bit-identical, whether any step's argmax (the greedy token) differed, whether the
greedy tokens agree, and the rows per pass. Nothing here is timed but the whole run's seconds.
"""
from __future__ import annotations

import argparse
import json
import os
import threading
import time

import torch

from autoreg_core.engine import decode
from autoreg_core.runtime.batcher import GATHER_MS, BatchPass, DecodeBatcher, timed_batched_decode

STEPS = 24
# eight prompts of different lengths (1, 3, 5, 6, 8, 16, 20 and 67 tokens on SmolLM2's tokenizer): passes pad
PROMPTS = ("Hi", "Water boils at", "2 + 2 =", "def fibonacci(n):", "The capital of France is a city called",
           "Once upon a time, a small robot lived in a lighthouse by the sea.",
           "Tell me a joke about cats, and then explain why it is funny, in two short sentences.",
           "The river runs past the old mill, under the stone bridge and on towards the sea, where the fishing "
           "boats wait for the tide and the gulls circle over the harbour wall. In the evening the lamps come on "
           "one by one along the quay, and the smell of bread drifts down from the bakery on the hill, where")
TOLERANCE = 1e-3  # the integration test's bound on the largest absolute difference


def steps_of(tab: int, steps: int) -> int:
    """Tab ``tab``'s number of steps: the tabs finish one after another, so passes shrink to one row."""
    return max(1, steps - 2 * tab)


def _batched_run(bundle, prompt_ids: list[list[int]], steps: int, gather_ms: float, pass_fn: BatchPass):
    """Every tab stepping greedily through one batcher at once: its tokens, each step's logits and pass rows."""
    batcher = DecodeBatcher(bundle, gather_ms=gather_ms, pass_fn=pass_fn)  # its own: nothing else rides in these passes
    n = len(prompt_ids)
    tokens: list[list[int]] = [[] for _ in range(n)]
    logits_of: list[list[torch.Tensor]] = [[] for _ in range(n)]
    rows_of: list[list[int]] = [[] for _ in range(n)]
    errors: list[BaseException] = []
    start = threading.Barrier(n)

    def tab(i: int) -> None:
        try:
            cache = decode.new_cache(bundle)
            logits = decode.forward(bundle, prompt_ids[i], cache).logits[0]
            start.wait()
            for _ in range(steps_of(i, steps)):
                token = int(torch.argmax(logits))
                tokens[i].append(token)
                shared = batcher.decode(cache, token)
                logits = shared.logits
                logits_of[i].append(logits.detach().clone())
                rows_of[i].append(shared.rows)
        except BaseException as exc:  # noqa: BLE001 - reported after the join
            errors.append(exc)
            start.abort()

    threads = [threading.Thread(target=tab, args=(i,), name=f"tab-{i}") for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return tokens, logits_of, rows_of, batcher.totals().passes


def measure(bundle, steps: int = STEPS, prompts=PROMPTS, gather_ms: float = GATHER_MS,
            pass_fn: BatchPass = timed_batched_decode) -> dict:
    """Batched against solo logits, step by step, for every tab (see the module's docstring)."""
    prompt_ids = [list(bundle.tokenizer(p)["input_ids"]) for p in prompts]
    tokens, batched, rows_of, passes = _batched_run(bundle, prompt_ids, steps, gather_ms, pass_fn)
    largest_abs, largest_rel, at, scale = 0.0, 0.0, None, 0.0
    identical = argmax_differs = compared = 0
    greedy_equal = True
    worst: dict[int, float] = {}  # rows in a pass → the largest difference seen in passes of that many rows
    with torch.inference_mode():
        for i, ids in enumerate(prompt_ids):
            cache = decode.new_cache(bundle)
            solo = decode.forward(bundle, ids, cache).logits[0]
            for k, token in enumerate(tokens[i]):
                greedy_equal &= int(torch.argmax(solo)) == token  # the solo greedy token at this step
                solo = decode.forward(bundle, [[token]], cache).logits[0]
                other = batched[i][k]
                diff = float((other - solo).abs().max())
                top = float(solo.abs().max())
                compared += 1
                identical += bool(torch.equal(other, solo))
                argmax_differs += int(torch.argmax(other)) != int(torch.argmax(solo))
                worst[rows_of[i][k]] = max(worst.get(rows_of[i][k], 0.0), diff)
                if diff > largest_abs:
                    largest_abs, at = diff, {"tab": i, "step": k + 1, "rows_in_its_pass": rows_of[i][k],
                                             "prompt_tokens": len(ids)}
                largest_rel = max(largest_rel, diff / top if top else 0.0)
                scale = max(scale, top)
    steps_by_rows: dict[int, int] = {}  # a pass of r rows is seen by r steps
    for rows in rows_of:
        for r in rows:
            steps_by_rows[r] = steps_by_rows.get(r, 0) + 1
    by_rows = {r: n // r for r, n in steps_by_rows.items()}
    return {"model": bundle.name, "tabs": len(prompts), "prompt_tokens": [len(ids) for ids in prompt_ids],
            "steps_per_tab": [len(t) for t in tokens], "steps_compared": compared,
            "largest_abs_logit_difference": largest_abs, "largest_relative_logit_difference": largest_rel,
            "largest_at": at, "largest_abs_solo_logit": round(scale, 3),
            "steps_bit_identical": identical, "any_argmax_differed": argmax_differs > 0,
            "steps_whose_argmax_differed": argmax_differs, "greedy_tokens_agree": greedy_equal,
            "passes": passes, "rows_per_pass": dict(sorted(by_rows.items())),
            "steps_in_shared_passes": sum(r > 1 for rows in rows_of for r in rows),
            "largest_abs_difference_by_rows": {r: worst[r] for r in sorted(worst)},
            "gather_ms": gather_ms, "torch_threads": torch.get_num_threads()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=STEPS, help="greedy steps per tab (1..256)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (the app's servers use few)")
    args = parser.parse_args(argv)
    if not 1 <= args.steps <= 256 or not 1 <= args.threads <= 64:
        parser.error("--steps must lie in 1..256 and --threads in 1..64")
    from autoreg_core import load_model

    torch.set_num_threads(args.threads)
    t0 = time.perf_counter()
    bundle = load_model()
    report = measure(bundle, args.steps)
    report["within_tolerance"] = report["largest_abs_logit_difference"] < TOLERANCE
    report["tolerance"] = TOLERANCE
    report["machine"] = {"cpu_count": os.cpu_count(),
                         "load_average_at_end": tuple(round(x, 2) for x in os.getloadavg())}
    report["seconds"] = round(time.perf_counter() - t0, 1)
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
