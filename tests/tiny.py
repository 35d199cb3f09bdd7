"""A tiny randomly initialised Llama and a byte-level BPE tokenizer, built in well under a second.

Unit tests use these instead of the embedded model, so they are fast and need no files.
"""
from __future__ import annotations

from functools import lru_cache

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

from autoreg_core import bundle_from_model

CORPUS = [
    "The cat sat on the mat. The dog sat on the log. A bird flew over the house.",
    "Once upon a time there was a small village by the sea, and everyone knew the baker.",
    "def add(a, b):\n    return a + b\n\nprint(add(2, 3))",
    "Émile a mangé une crème brûlée. 日本語のテキスト. مرحبا بالعالم 🙂🚀",
] * 4
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


@lru_cache(maxsize=1)
def tiny_tokenizer() -> PreTrainedTokenizerFast:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(CORPUS, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", bos_token="<|im_start|>",
                                   pad_token="<|endoftext|>", unk_token="<|endoftext|>")
    fast.chat_template = CHAT_TEMPLATE
    return fast


def tiny_model(seed: int = 0, attn: str = "sdpa") -> LlamaForCausalLM:
    tok = tiny_tokenizer()
    config = LlamaConfig(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                         max_position_embeddings=256, eos_token_id=tok.eos_token_id,
                         pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id,
                         tie_word_embeddings=True, attn_implementation=attn)
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    model.generation_config.eos_token_id = tok.eos_token_id
    model.generation_config.pad_token_id = tok.pad_token_id
    return model.eval()


def tiny_bundle(seed: int = 0, attn: str = "sdpa"):
    return bundle_from_model(tiny_model(seed, attn), tiny_tokenizer(), name="tiny-llama")


@lru_cache(maxsize=1)
def sentencepiece_tokenizer() -> PreTrainedTokenizerFast:
    """A Llama-style vocabulary: '▁' marks a space, unknown characters fall back to <0xNN> bytes."""
    from tokenizers import normalizers

    tok = Tokenizer(models.BPE(byte_fallback=True, unk_token="<unk>"))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                     decoders.Strip(" ", 1, 0)])
    byte_pieces = [f"<0x{b:02X}>" for b in range(256)]
    trainer = trainers.BpeTrainer(vocab_size=600, special_tokens=["<unk>", "<s>", "</s>", *byte_pieces],
                                  show_progress=False)
    tok.train_from_iterator(CORPUS, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", bos_token="<s>", eos_token="</s>")


def varied_model(seed: int = 0):
    """The tiny Llama with larger random weights, so its greedy output depends on the whole context
    (the default initialisation repeats one token whatever the prompt)."""
    model = tiny_model(seed)
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if param.dim() == 2:
                param.copy_(torch.randn(param.shape, generator=generator) * (1.0 if "embed" in name else 0.25))
    return model


@lru_cache(maxsize=1)
def varied_bundle():
    return bundle_from_model(varied_model(), tiny_tokenizer(), name="tiny-llama-varied")
