"""What the sampling lab writes next to its charts: escaped labels, this context's numbers, tables."""
import torch

from autoreg_core import SamplingConfig
from autoreg_core.engine import decode, prefix
from autoreg_core.engine.tokens import token_views
from autoreg_core.experiments.beam_search import ROOT, Beam, BeamResult, BeamSettings, beam_search
from autoreg_core.experiments.continuations import sample_continuations
from autoreg_core.experiments.sampling_lab import draw_many, inverse_cdf_draw, temperature_sweep
from autoreg_ui.lessons.sampling import text


def test_texts_escape_model_output_and_say_what_the_filters_did():
    assert text.plain("*bold* $x$ <b>") == r"\*bold\* \$x\$ \<b\>"
    logits = torch.randn(300, generator=torch.Generator().manual_seed(0)) * 3
    pipe = decode.process(logits, None, SamplingConfig(temperature=0.8, top_p=0.9, min_p=0.05))
    filters = text.filters_text(pipe)
    assert f"{pipe.stage(decode.MIN_P).threshold:.4f}" in filters and f"{pipe.kept:,} token" in filters
    assert "“\\*”" in text.temperature_text(pipe, lambda i: "*") and "T = 0.8" in text.temperature_text(pipe, str)
    greedy = decode.process(logits, None, SamplingConfig(temperature=0))
    assert ("info", "Temperature 0 is greedy decoding: the most likely token is taken, no division by T happens and "
            "top-k, top-p and min-p change nothing.") in text.pipeline_messages(greedy)
    assert "greedy" in text.temperature_text(greedy, str) and text.pipeline_messages(pipe) == []
    dead = decode.process(torch.full((300,), float("nan")), None, SamplingConfig(temperature=0, repetition_penalty=1.2))
    levels = [level for level, _ in text.pipeline_messages(dead)]
    assert levels.count("warning") == 1 and len(levels) == len(dead.notes) + 2  # no greedy note when nothing is left
    assert text.uniform_bits(1024) == 10.0


def test_beam_texts(tiny):
    res = beam_search(tiny, prefix.prefill(tiny, tiny.tokenizer("The cat")["input_ids"]), BeamSettings(2, 3))
    assert f"Width 2, {res.steps} steps" in text.beam_text(res)
    labels = text.beam_labels(res, str)
    assert set(labels) == {n.token_id for n in res.nodes[1:]} | set(res.greedy_ids)
    best = Beam([1, 2], cum_logprob=-5.0, score=-2.5, node_id=1, ends_with_eos=False)
    made = BeamResult(BeamSettings(2, 2), nodes=[ROOT], beams=[best], greedy_ids=[3, 4], greedy_logprobs=[-1.0, -1.0])
    assert text.greedy_beats_beams(made)
    made.greedy_logprobs = [-3.0, -3.0]
    assert not text.greedy_beats_beams(made)
    made.greedy_ids, made.greedy_logprobs = [3], [-0.1]  # shorter: not comparable
    assert not text.greedy_beats_beams(made)
    table = text.continuations_table(sample_continuations(tiny, prefix.prefill(tiny, [5, 6]),
                                                         SamplingConfig(temperature=0), k=2, m=2))
    assert [row["#"] for row in table] == [1, 2] and all(row["continuation"] for row in table)


def test_context_labels_and_draw_sentences(tiny):
    ids = tiny.tokenizer("Émile a mangé 🙂")["input_ids"]
    views = token_views(tiny.tokenizer, ids)
    assert text.context_text(tiny.tokenizer, ids) == "Émile a mangé 🙂"
    assert text.context_text(tiny.tokenizer, ids, last=2) == views[-2].text + views[-1].text
    label = text.labeler(tiny.tokenizer)
    space = tiny.tokenizer(" a")["input_ids"][0]
    assert label(space) == "·a" and label(space) is label(space)
    pipe = decode.process(torch.randn(300), None, SamplingConfig(top_k=10))
    draw = inverse_cdf_draw(pipe.probs, 3)
    sentence = text.draw_text(draw, pipe, 3, lambda i: "_x_")
    assert f"u = **{draw.u:.4f}**" in sentence and r"\_x\_" in sentence and "of 10 kept" in sentence
    assert f"ranked {draw.position + 1} of" in sentence
    many = draw_many(pipe.probs, 400, 0)
    assert "400 draws" in text.draws_text(many, pipe.probs, 0)
    assert f"{many.largest_gap(pipe.probs):.4f}" in text.draws_text(many, pipe.probs, 0)
    sweep = temperature_sweep(torch.randn(300))
    assert f"{sweep.cover[sweep.at(1.0)]:,} tokens for 90%" in text.sweep_text(sweep)


def test_the_lessons_sentences_with_their_numbers():
    pipe = decode.process(torch.randn(300, generator=torch.Generator().manual_seed(1)), None,
                          SamplingConfig(temperature=0.7, top_p=0.9))
    maths = text.stage_maths(pipe, str)
    assert [kind for kind, _ in maths].count("latex") == 3 and maths[0] == ("markdown", "**Softmax with temperature**")
    assert ("markdown", text.temperature_text(pipe, str)) in maths
    assert maths[-1] == ("markdown", text.filters_text(pipe))
    assert text.too_long(30, 2048) == "The context is too long for 30 more tokens (2048 positions at most)."
    assert text.too_long(8) == "The context is too long for 8 more tokens."
    assert text.continuation_progress(1, 5, 10) == (0.75, "strategy B: token 5 of 10")
    assert text.capped_draws(500_000, 200_000) == "500,000 is above the cap; drawing 200,000."
    assert text.entropy_caption(1024).endswith("uniform choice over all 1,024 tokens would be 10.0.")


def test_beam_search_uses_name_translation_and_its_pull_toward_generic_text():
    said = text.BEAM_USES
    assert said.startswith("Beam search is the usual choice where one right answer exists")
    assert "machine translation, speech recognition, summarising" in said
    assert "pulls towards safe, generic and repetitive phrases" in said
    assert said.endswith("chat models therefore sample.")


def test_the_strategies_guide_describes_the_seven_settings_on_one_set_of_logits():
    """Section 2 runs one set of logits through default_strategies: no draw, no seed, no continuation."""
    import inspect

    from autoreg_core.experiments.sampling_lab import compare_strategies, default_strategies
    from autoreg_ui.lessons.sampling import view

    notice, try_, ask = text.GUIDES["2 · Strategies side by side"]
    names = [name for name, _ in default_strategies()]
    assert len(names) == 7 and "seven settings" in notice
    assert names[:4] == ["greedy", "temperature 0.7", "temperature 1.0", "temperature 1.5"]
    assert "greedy, temperatures 0.7, 1.0 and 1.5, and top-k, top-p and min-p at T = 1" in notice
    assert all(cfg.temperature == 1.0 for _, cfg in default_strategies()[4:])
    for said in (notice, try_, ask):
        assert "seed" not in said and "continu" not in said and "prompt" not in said
    # the Try names a control the section has, and its question has an answer on real-looking logits
    assert "p of the top-p strategy" in inspect.getsource(view.strategy_controls) and "p of the top-p strategy" in try_
    logits = torch.randn(5000, generator=torch.Generator().manual_seed(0)) * 3
    kept = {p: {r.name: r.kept for r in compare_strategies(logits, default_strategies(top_k=40, top_p=p))}
            for p in (0.9, 0.05)}
    assert kept[0.9]["top-p 0.9"] > kept[0.9]["top-k 40"] and kept[0.05]["top-p 0.05"] < kept[0.05]["top-k 40"]
