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
NOTHING_TO_SCORE = "press Next token a few times first: there is nothing generated to score yet."
NOTHING_TO_LENS = "press Next token first: the lens reads the last generated token."
NO_DECODE_STEP = "press Next token a few times first: there is no decode step to compare yet."
NOT_CAPTURED = ("the newest token's attention was not captured (its step was taken on another page): press Next "
                "token on this page, then check again.")
NONE_OF_THE_CHOICES = "its attention row has {keys:,} weights, none of the choices."

# Each question: (ask, choices, answer template). The answer names the right choice itself.
STEP_TOP = ("Before the next click: will the model's favourite next token get more than half of the probability?",
            ("yes, more than 50%", "no, 50% or less"),
            "The model's top candidate is “{label}” with p = **{p:.1%}** in its own softmax; the runner-up has "
            "{p2:.1%}. A confident step has one tall bar; an open one spreads the mass.")
STEP_LOGPROB = ("After the next token, will the sequence log-prob be higher or lower than now?",
                ("higher", "lower (or the same)", "it depends on the token"),
                "Lower or the same, always: each step adds log p, and a probability is at most 1, so log p ≤ 0. "
                "Now it is **{now:.2f}** nats; the best the next step can do is add log {p:.3f} = **{best:.2f}**.")
STEP_ENTROPY = ("How uncertain is the model about the next token? Guess the entropy of its own softmax at this step.",
                ("under 1 bit (nearly sure)", "1 to 4 bits", "more than 4 bits"),
                "**{bits:.2f} bits**: as uncertain as a fair pick among about **{even:,.1f}** tokens (2 to the power "
                "of the entropy). Near 0 one token takes almost all the mass; each extra bit doubles that number.")
SAMPLING_TEMPERATURE = ("Temperature 0.5 instead of 1.0 (nothing else on): does the top token's probability rise or "
                        "fall at this step?",
                        ("it rises", "it falls", "it stays the same"),
                        "Measured on this step's logits: **{p1:.1%}** at T = 1.0, **{p05:.1%}** at T = 0.5. Dividing "
                        "the logits by T < 1 stretches the gaps between them, so the softmax favours the leader more.")
SAMPLING_TOP_P = ("Top-p = 0.9 alone: how many of the {vocab:,} tokens can still be drawn at this step?",
                  ("just 1", "2 to 10", "11 to 100", "more than 100"),
                  "**{kept:,}** tokens: the smallest set of most likely tokens whose probabilities add up to at least "
                  "0.9 (here {mass:.1%}). A confident step keeps few; an open one keeps many.")
SAMPLING_TOP_K = ("Top-k = 5 alone (T = 1): after renormalising, is the top token's probability higher, the same or "
                  "lower than in the raw softmax?",
                  ("higher", "the same", "lower"),
                  "At this step: **{p_raw:.1%}** in the raw softmax, **{p_k:.1%}** after top-k = 5. The five kept "
                  "tokens held {mass:.1%} of the probability, and renormalising divides each by that share, so a "
                  "kept token can gain but never lose.")
ATTENTION_KEYS = ("The newest token sits at position {pos:,} of the cache (counting from 0, so {pos:,} tokens came "
                  "before it). Over how many keys did its query attend?",
                  ("{pos:,}", "{pos_plus:,}", "just 1"),
                  "**{keys:,}**, read just now from the length of its attention row: its own key and value were "
                  "appended to the cache first, then its query scored every cached key, its own included.")
ATTENTION_FOCUS = ("Averaged over the heads of layer {layer}, does the newest token's query put more than half of its "
                   "weight on one single key?",
                   ("yes, more than half on one key", "no, it is spread out more"),
                   "Read from its attention row: the largest mean weight in layer {layer} is **{top:.1%}**, on "
                   "position {pos} (“{label}”); the very first token got {first:.1%}. {reading}")
FOCUS_ON_FIRST = ("Here the first token took the most: heads with nothing useful to read often park their weight on "
                  "it (an “attention sink”).")
FOCUS_ELSEWHERE = "Try another layer with the slider and ask again: each layer spreads its weight differently."
ATTENTION_GROWTH = ("How much does this model's KV cache grow with every token?",
                    ("under 10 KiB", "10 KiB to 100 KiB", "100 KiB to 1 MiB", "more than 1 MiB"),
                    "**{per_token}** per token: 2 (K and V) × {layers} layers × {kv_heads} KV heads × {head_dim} "
                    "dims × {bytes:g} bytes. A 2,048-token text needs {at_2048}.")
COST_FLOPS = ("At L = {length:,}, how many times the FLOPs of a cached step does one naive step (recomputing "
              "everything) cost?",
              ("about the same", "2× to 20×", "20× to 200×", "more than 200×"),
              "**{ratio:,.0f}×**: {naive} FLOPs against {cached} (this model's formulas, in the *Count* section). "
              "The naive step pushes all {length:,} positions through every weight; the cached one pushes one.")
COST_GROWTH = ("Does a cached step do more arithmetic at 2,048 tokens than at 128?",
               ("no, exactly the same", "yes, more: attention reads the whole cache", "yes, 16× more"),
               "The weights' FLOPs are the same at every length, but attention over the cache grows with L: a cached "
               "step does **{growth:.0%}** more FLOPs at 2,048 than at 128 for this model ({at_128} vs {at_2048}). "
               "What that does to the time is what the race measures.")
COST_SHARE = ("At L = {length:,}, what share of a cached step's FLOPs is attention over the cache?",
              ("under 10%", "10% to 30%", "30% to 60%", "more than 60%"),
              "**{share:.0%}** for this model: {attention} FLOPs for one query against {length:,} cached keys in every "
              "layer and head, out of {total} for the whole step. Attention alone equals the layers' weight FLOPs "
              "at L ≈ {crossover:,}.")
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
INSIDE_PHASES = ("In this session, which took longer: the prefill over the {prompt:,}-token prompt, or one decode step?",
                 ("the prefill", "one decode step", "about the same (within 25%)"),
                 "Timed in this session: the prefill took **{prefill:.1f} ms** for {prompt:,} tokens "
                 "({per_token:.2f} ms per token); a decode step **{decode:.1f} ms** (median of {steps:,}). "
                 "{per_token_reading}")
PROMPT_TOKEN_CHEAPER = "One prompt token inside the prefill cost {ratio:.1f}× less than a decode step."
PROMPT_TOKEN_DEARER = "One prompt token inside the prefill cost {ratio:.1f}× more than a decode step."
SERVING_BATCH = ("One decode step for 8 sequences instead of 1, each at 256 tokens: how many times more bytes "
                 "does it read?",
                 ("about the same (under 2×)", "about 4×", "about 8×"),
                 "**{ratio:.2f}×**: the {weights} of weights are read once per step whatever the batch; only the "
                 "caches grow ({cache_1} for one sequence, {cache_8} for eight). That is why batching is nearly free "
                 "while a step is memory-bound.")
SERVING_MEMORY = ("32 users at 2,048 tokens each on this model: what takes more memory, the weights or the KV caches?",
                  ("the weights", "the KV caches"),
                  "Weights **{weights}**, caches **{caches}** (32 × 2,048 positions × {per_token} each). {reading}")
CACHES_LARGER = ("Here the caches are {times:.1f}× the weights: with many users they, not the weights, fill the memory, "
                 "which is why servers page and share them.")
WEIGHTS_LARGER = ("Here the weights are still {times:.1f}× the caches; longer texts or more users would turn that "
                  "around, since only the caches grow with them.")
SERVING_CROSSOVER = ("Sequences of 256 tokens each: from how many sequences in one decode step do their KV caches add up "
                     "to more bytes than this model's weights?",
                     ("10 or fewer", "11 to 100", "101 to 1,000", "more than 1,000"),
                     "From **{batch:,}** sequences: the weights are {weights}, read once per step whatever the batch, "
                     "and each sequence's cache at 256 tokens adds {per_sequence}. Below that the weights dominate what "
                     "a step reads; past it the caches do.")
TOKENS_SCRIPT = ("Which needs more tokens for the same sentence: English or Tamil?",
                 ("English", "Tamil", "about the same"),
                 "Tokenized now: English **{en_tokens}** tokens for {en_chars} characters, Tamil **{ta_tokens}** "
                 "for {ta_chars}. A vocabulary learned mostly from English splits other scripts into small pieces, "
                 "down to single bytes.")
TOKENS_SPACE = ("Are “Paris” and “ Paris” (with a leading space) the same token?",
                ("yes", "no"),
                "{reading}: “Paris” is id {plain_ids} and “ Paris” is id {space_ids}.")
SPACE_APART = ("No. The space belongs to the token that follows it, so the same word has two spellings in the "
               "vocabulary")
SPACE_SAME = "Yes, for this tokenizer: the leading space made no difference here"
TOKENS_EMOJI = ("The cat emoji 🐈 is one character (4 bytes in UTF-8). How many tokens is it for this model?",
                ("1", "2 to 4", "more than 4"),
                "**{n}**, tokenized now: {pieces}. {reading}")
EMOJI_ONE_PIECE = "This vocabulary has a piece for the whole character."
EMOJI_BYTES = ("This vocabulary has no piece for the whole character, so it is spelled out in smaller pieces of its "
               "bytes; a piece that ends inside the character is shown as its bytes in ⟨ ⟩.")
THIRDS = ("the first third", "the middle third", "the last third")
LENS_EARLY = ("An easy continuation: the guess is already there after a few layers (the next step may differ: "
              "early layers often just echo the input token).")
LENS_LATE = "The guess forms late: the early layers mostly carry the input token, the last ones commit to an answer."
