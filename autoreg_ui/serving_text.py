"""What the serving page says: the lesson's prose, section by section, and its captions.

Constants and small functions (no Streamlit); the sentences about measured results live with the
controller that computes them (``serving.py``).
"""
from __future__ import annotations

INTRO = (
    "A decode step reads every weight of the model to produce one token for one sequence: the processor mostly "
    "waits for memory. Servers win that time back in four ways, each measured below on the loaded model on this "
    "machine: **batching** (one weight read, many sequences), **continuous batching** (requests join and leave the "
    "running batch at every step), **speculative decoding** (a cheap draft guesses, the model checks several "
    "guesses in one pass, the output is unchanged) and **lower precision** (fewer bytes per weight).")
MEASURED_LIVE = (" Nothing below is precomputed: every number is measured when you press a button. "
                 "Measurements take turns, one at a time per server, because every student here shares the model.")


def measuring_now(label: str) -> str:
    return f"Measuring now on this server: {label}. A click of yours waits in line behind it."


BATCHING = (
    "Decode B sequences together and a step still reads every weight once; what grows with B is each row's own KV "
    "cache on top, and the arithmetic. While the bytes dominate, extra rows are nearly free: the step barely slows "
    "and B times as many tokens come out. Each sequence still waits one whole step per token, so throughput is "
    "bought with a little latency.")
CONTINUOUS_BATCHING = (
    "Real requests differ in length. **Static batching** fills the slots and decodes until the longest member is "
    "done: finished rows keep their slot (and keep being computed) while the queue waits. **Continuous batching** "
    "looks at the batch after every step: finished rows leave, queued requests are prefilled and join the running "
    "batch on the same KV cache (rows of different lengths are left-padded and masked). Both serve the same queue "
    "greedily here; every request gets exactly the tokens it would get alone.")
SPECULATIVE = (
    "A **draft** guesses the next k tokens; the model reads the last token and all k guesses in **one verify pass** "
    "and so knows its own distribution p at each. Guess d (drafted with probability q) is kept with probability "
    "min(1, p(d)/q(d)); at the first rejection a token is drawn from max(0, p − q), renormalised, and the round "
    "ends; if all are kept the last position adds one more token. Every token then follows p exactly, so the output "
    "is the model's own; greedy output is token for token that of plain decoding. No second model is embedded, so "
    "the drafts here are **prompt lookup** (copy what followed the last two tokens earlier in the context) and an "
    "**early exit** (the first layers of this same model, then its final norm and LM head).")
OTHER_DRAFTS = "Other models of the operator's allowlist can draft if they share the tokenizer."
SAMPLED_TEXTS_DIFFER = ("Sampling: speculative and plain runs draw different random numbers, so their texts differ; "
                        "what is equal is the distribution every token is drawn from (tested with many draws).")


def rounds_title(prompt: str, draft: str) -> str:
    return f"Every round: “{prompt}” with {draft}"


PRECISION = (
    "Since a decode step waits for bytes, storing each weight in fewer of them lowers the floor on its time "
    "(bytes read ÷ bandwidth) and the memory a model needs, at the price of rounding every weight. Four real paths, "
    "built from the loaded model and compared with float32 over a fixed text: **bfloat16** (a torch copy), **int8** "
    "(torch's dynamically quantized Linear layers: int8 weights, int8 products), and float32 weights with an "
    "**fp8 KV cache** (transformers' `QuantizedCache`, one byte per cached value).")
EMBEDDED_WEIGHTS = (
    "The embedded weights were already 4-bit in the GGUF file they ship in (Q4_1: blocks of 32 weights "
    "sharing a 16-bit scale and minimum; the embedding in 8 bits). The float32 model is those 4-bit values "
    "written out in 4 bytes each. For scale: llama.cpp runs this model at 8 bits in about 4 ms per token on "
    "a laptop CPU, close to its own bandwidth floor.")


def precision_caption(cache_positions: int, quality_positions: int) -> str:
    return (f"Step time: the fastest of the decode steps that filled the cache to {cache_positions} positions. "
            "Bandwidth floor: bytes read by a decode step ÷ this machine's measured copy bandwidth. KL and top-1 "
            f"over {quality_positions} positions of a fixed text.")


def dial_label(bits: tuple[int, ...]) -> str:
    return f"Round the weights to {bits[0]}…{bits[-1]} bits"
