"""What the "Predict, then check" boxes say: the questions, their choices, and answer templates.

The templates are filled by ``predict`` with numbers the live model or the engine computes when the
learner has answered; nothing here is a result.
"""
from __future__ import annotations

TITLE = "Predict, then check"
INTRO = ("Pick an answer before you look: the check runs only once you have chosen, on the live model or "
         "with the app's own arithmetic.")
CORRECT, NOT_QUITE = "Right.", "Not quite."
NO_SESSION = "Start a prompt first: this check reads the live session."
FAILED = "This check could not run: {error}"

# Each question: (ask, choices, answer template). The answer names the right choice itself.
STEP_TOP = ("Before the next click: will the model's favourite next token get more than half of the probability?",
            ("yes, more than 50%", "no, 50% or less"),
            "The model's top candidate is “{label}” with p = **{p:.1%}** in its own softmax; the runner-up has "
            "{p2:.1%}. A confident step has one tall bar; an open one spreads the mass.")
STEP_LOGPROB = ("After the next token, will the sequence log-prob be higher or lower than now?",
                ("higher", "lower (or the same)", "it depends on the token"),
                "Lower or the same, always: each step adds log p, and a probability is at most 1, so log p ≤ 0. "
                "Now it is **{now:.2f}** nats; the best the next step can do is add log {p:.3f} = **{best:.2f}**.")
SAMPLING_TEMPERATURE = ("Temperature 0.5 instead of 1.0 (nothing else on): does the top token's probability rise or "
                        "fall at this step?",
                        ("it rises", "it falls", "it stays the same"),
                        "Measured on this step's logits: **{p1:.1%}** at T = 1.0, **{p05:.1%}** at T = 0.5. Dividing "
                        "the logits by T < 1 stretches the gaps between them, so the softmax favours the leader more.")
SAMPLING_TOP_P = ("Top-p = 0.9 alone: how many of the {vocab:,} tokens can still be drawn at this step?",
                  ("just 1", "2 to 10", "11 to 100", "more than 100"),
                  "**{kept:,}** tokens: the smallest set of most likely tokens whose probabilities add up to at least "
                  "0.9 (here {mass:.1%}). A confident step keeps few; an open one keeps many.")
ATTENTION_KEYS = ("The next step's new token: over how many keys does its query attend (the cache holds {cache:,} "
                  "positions now)?",
                  ("{cache:,}", "{cache_plus:,}", "just 1"),
                  "**{cache_plus:,}**: the new token's own key and value are appended to the cache first, then its "
                  "query scores every cached key, its own included.")
ATTENTION_GROWTH = ("How much does this model's KV cache grow with every token?",
                    ("under 10 KiB", "10 KiB to 100 KiB", "100 KiB to 1 MiB", "more than 1 MiB"),
                    "**{per_token}** per token: 2 (K and V) × {layers} layers × {kv_heads} KV heads × {head_dim} "
                    "dims × {bytes:g} bytes. A 2,048-token text needs {at_2048}.")
COST_FLOPS = ("At L = {length:,}, how many times the FLOPs of a cached step does one naive step (recomputing "
              "everything) cost?",
              ("about the same", "2× to 20×", "20× to 200×", "more than 200×"),
              "**{ratio:,.0f}×**: {naive} FLOPs against {cached} (this model's formulas, in the *Count* section). "
              "The naive step pushes all {length:,} positions through every weight; the cached one pushes one.")
COST_GROWTH = ("Does a cached step get slower as the text grows from 128 to 2,048 tokens?",
               ("no, exactly the same", "yes, a little or more: attention reads the whole cache",
                "yes, 16× slower"),
               "The weights cost the same at every length, but attention over the cache grows with L: a cached step "
               "does **{growth:.0%}** more FLOPs at 2,048 than at 128 for this model ({at_128} vs {at_2048}).")
INSIDE_PASSES = ("This text has {n:,} generated tokens. How many forward passes does teacher forcing need to score "
                 "every one of them?",
                 ("1", "{n:,}", "{n_plus:,}"),
                 "**One** pass over the whole text scores every position at once (ran it now: {ms:.0f} ms). Its "
                 "log-probs match the stepped ones to **{gap:.1e}** nats: same model, same arithmetic, no sampling.")
INSIDE_LENS = ("The model's last top token, “{label}”: in which part of the {layers} layers does the logit lens "
               "first rank it first?",
               ("the first third", "the middle third", "the last third", "never before the end"),
               "First ranked top at **{where}** (layer {first} of {layers}), and it stays top from layer {settles} on. "
               "{reading}")
SERVING_BATCH = ("One decode step for 8 sequences instead of 1, each at 256 tokens: how many times more bytes "
                 "does it read?",
                 ("about the same (under 2×)", "about 4×", "about 8×"),
                 "**{ratio:.2f}×**: the {weights} of weights are read once per step whatever the batch; only the "
                 "caches grow ({cache_1} for one sequence, {cache_8} for eight). That is why batching is nearly free "
                 "while a step is memory-bound.")
SERVING_MEMORY = ("32 users at 2,048 tokens each on this model: what takes more memory, the weights or the KV caches?",
                  ("the weights", "the KV caches"),
                  "Weights **{weights}**, caches **{caches}** (32 × 2,048 positions × {per_token} each). For a small "
                  "model the caches overtake the weights quickly: that is why servers page and share them.")
TOKENS_SCRIPT = ("Which needs more tokens for the same sentence: English or Tamil?",
                 ("English", "Tamil", "about the same"),
                 "Tokenized now: English **{en_tokens}** tokens for {en_chars} characters, Tamil **{ta_tokens}** "
                 "for {ta_chars}. A vocabulary learned mostly from English splits other scripts into small pieces, "
                 "down to single bytes.")
TOKENS_SPACE = ("Are “Paris” and “ Paris” (with a leading space) the same token?",
                ("yes", "no"),
                "No: “Paris” is id {plain_ids} and “ Paris” is id {space_ids}. The space belongs to the token that "
                "follows it, so the same word has two spellings in the vocabulary.")
THIRDS = ("the first third", "the middle third", "the last third")
LENS_EARLY = ("An easy continuation: the guess is already there after a few layers (the next step may differ: "
              "early layers often just echo the input token).")
LENS_LATE = "The guess forms late: the early layers mostly carry the input token, the last ones commit to an answer."
