"""Constrained decoding: every output parses under its grammar, and the grammar stage matches llguidance's
own torch kernels (its bitmask and apply_token_bitmask_inplace) run inside transformers' ``generate``, token
for token, with greedy decoding."""
from __future__ import annotations

import json
import re

import jsonschema
import llguidance
import llguidance.torch
import pytest
import torch
from transformers import GenerationConfig, LogitsProcessor, LogitsProcessorList

from autoreg_core import SamplingConfig
from autoreg_core.engine.session import encode_prompt
from autoreg_core.experiments import constrained_decoding as grammar

SCHEMA = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 12},
                                           "age": {"type": "integer", "minimum": 0, "maximum": 150}},
          "required": ["name", "age"], "additionalProperties": False}
PHONE = r"\d{3}-\d{4}"
MOODS = ["positive", "negative", "neutral"]
CASES = [(grammar.JSON_SCHEMA, SCHEMA, "Describe a person called Ada who is 36, as JSON with her name and age."),
         (grammar.REGEX, PHONE, "Invent a phone number in the form 555-0123."),
         (grammar.CHOICE, MOODS, "Is this review positive or negative? 'I loved the film.'")]


def parses(kind: str, source, text: str) -> bool:
    if kind == grammar.JSON_SCHEMA:
        jsonschema.validate(json.loads(text), source)  # raises when it does not parse or validate
        return True
    if kind == grammar.REGEX:
        return re.fullmatch(source, text) is not None
    return text in source


class LLGuidanceProcessor(LogitsProcessor):
    """The reference: llguidance's own bitmask kernels as a transformers logits processor (batch 1)."""

    def __init__(self, found: llguidance.LLMatcher, vocab: int, prompt_len: int):
        self.found, self.prompt_len = found, prompt_len
        self.bitmask = llguidance.torch.allocate_token_bitmask(1, vocab)

    def __call__(self, input_ids, scores):
        if input_ids.shape[1] > self.prompt_len:
            assert self.found.consume_token(int(input_ids[0, -1]))
        llguidance.torch.fill_next_token_bitmask(self.found, self.bitmask)
        llguidance.torch.apply_token_bitmask_inplace(scores, self.bitmask)
        return scores


def reference(bundle, ids: list[int], kind: str, source, max_new: int) -> list[int]:
    processor = LLGuidanceProcessor(grammar.matcher(bundle, kind, source), bundle.spec.vocab, len(ids))
    config = GenerationConfig(max_new_tokens=max_new, do_sample=False, eos_token_id=bundle.eos_token_ids,
                              pad_token_id=bundle.tokenizer.pad_token_id)
    out = bundle.model.generate(torch.tensor([ids]), generation_config=config,
                                logits_processor=LogitsProcessorList([processor]))
    return out[0, len(ids):].tolist()


def test_the_checker_itself_says_no():
    assert not parses(grammar.REGEX, PHONE, "555-01234") and not parses(grammar.CHOICE, MOODS, "Positive")
    with pytest.raises(ValueError):
        parses(grammar.JSON_SCHEMA, SCHEMA, '{"name": "Ada"')
    with pytest.raises(jsonschema.ValidationError):
        parses(grammar.JSON_SCHEMA, SCHEMA, '{"name": "Ada"}')


def test_the_stage_masks_to_minus_infinity_only_what_is_not_allowed():
    logits, ok = torch.tensor([1.0, 2.0, 3.0, 4.0]), torch.tensor([True, False, True, False])
    assert grammar.mask_logits(logits, ok).tolist() == [1.0, float("-inf"), 3.0, float("-inf")]


def test_bad_grammars_are_refused_with_a_message(tiny):
    for kind, source in [(grammar.REGEX, "(unclosed"), (grammar.CHOICE, []), (grammar.JSON_SCHEMA, "{not json"),
                         ("yaml", "x")]:
        with pytest.raises(ValueError):
            grammar.matcher(tiny, kind, source)


@pytest.mark.parametrize("kind,source,prompt", CASES, ids=[c[0] for c in CASES])
def test_sampled_outputs_on_the_tiny_model_parse(tiny, kind, source, prompt):
    """A random model's text is nonsense, but the grammar makes it valid nonsense, whatever the seed."""
    ids = encode_prompt(tiny, prompt, chat=False)
    for seed in range(3):
        out = grammar.generate(tiny, ids, kind, source, grammar.MAX_NEW, SamplingConfig(temperature=1.0, seed=seed),
                               torch.Generator().manual_seed(seed))
        if out.complete and out.ended_by_eos:
            assert parses(kind, source, tiny.tokenizer.decode(out.text_ids)), out.text_ids
        assert all(1 <= s.allowed <= tiny.spec.vocab for s in out.steps)
        assert len(out.steps) == len(out.tokens)


@pytest.mark.parametrize("kind,source,prompt", CASES, ids=[c[0] for c in CASES])
def test_embedded_outputs_parse_and_match_the_library_in_transformers(embedded, kind, source, prompt):
    ids = encode_prompt(embedded, prompt, chat=True)
    out = grammar.generate(embedded, ids, kind, source, 40)
    assert out.complete and out.ended_by_eos
    assert parses(kind, source, embedded.tokenizer.decode(out.text_ids))
    ref = reference(embedded, ids, kind, source, 40)
    assert out.tokens == ref and len(out.tokens) == len(ref)  # whole sequences and lengths
    free = grammar.generate(embedded, ids, None, None, 40)
    assert all(s.allowed == embedded.spec.vocab and s.removed_mass == 0.0 for s in free.steps)
    assert any(s.removed_mass > 0.01 for s in out.steps)
