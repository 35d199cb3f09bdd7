"""What the app says about the loaded model's family: the sidebar's model line and the chat switch's reason.

Pure functions (no Streamlit). The family is read from the checkpoint's own config (``model_type``), never
guessed from its name, so a fine-tune of GPT-2 named anything is still called GPT-2.
"""
from __future__ import annotations

# transformers' ``model_type`` → the architecture's usual name
FAMILY_NAMES = {"gpt2": "GPT-2", "gpt_neox": "GPT-NeoX", "opt": "OPT", "phi": "Phi", "phi3": "Phi-3",
                "llama": "Llama", "qwen2": "Qwen2", "qwen3": "Qwen3", "mistral": "Mistral", "gemma": "Gemma",
                "gemma2": "Gemma 2", "gemma3_text": "Gemma 3"}


def family_name(model_type: str) -> str:
    """``"gpt_neox"`` → ``"GPT-NeoX"``; a type not listed is shown as transformers spells it."""
    return FAMILY_NAMES.get(model_type, model_type)


def parameter_count(n: int) -> str:
    """134,515,008 → '134.5 M'; 1,234,567,890 → '1.23 B'; under a million, every digit."""
    if n >= 1_000_000_000:
        return f"{n / 1e9:.2f} B"
    if n >= 1_000_000:
        return f"{n / 1e6:.1f} M"
    return f"{n:,}"


def model_line(name: str, model_type: str, n_params: int, device: str, dtype: str) -> str:
    """The sidebar's caption under the model box: which model, its architecture, its size, where it runs."""
    return (f"{name} · {family_name(model_type)} architecture · {parameter_count(n_params)} parameters · "
            f"{device} · {dtype}")


def chat_off(model: str) -> str:
    """Why the chat switch is off: the checkpoint's tokenizer ships no chat template to wrap the prompt in."""
    return f"Chat mode is off: {model}'s tokenizer has no chat template, so the prompt goes in as plain text."


CHAT_HELP = "Wrap the prompt in the model's chat template; its special tokens stay visible."
