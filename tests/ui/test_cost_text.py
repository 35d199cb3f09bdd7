"""What the cost page says, with this model's shape and this run's measurements."""
from autoreg_core.cost import CostPoint
from autoreg_core.spec import PRESETS
from autoreg_ui import cost_text as text


def test_the_shape_and_the_learners_sequence_carry_their_numbers():
    spec = PRESETS["70B model with GQA, 128K context"]
    intro = text.counts_intro(spec)
    assert f"{spec.n_layers} layers, {spec.n_heads} query heads of size {spec.head_dim}" in intro
    assert f"N_body = {spec.body_params:,} weights" in intro and f"V = {spec.vocab:,}" in intro
    assert text.your_sequence(12, 11, 2048, 2048) == (
        "Your sequence: 12 tokens; its KV cache holds 11 positions, 2.00 KiB measured (2.00 KiB by the formula). "
        "Every step adds one position and one decode step of the race below.")
    assert text.attention_share(512, 0.0312).startswith("At L = 512 the attention term is 3.1% of a cached step")


def test_run_prompt_and_the_device_paragraph_follow_what_was_measured():
    assert text.press_run([]) == "Press **Run the race** to measure this model on this machine."
    assert text.press_run([256, 1024]).endswith(" Results are kept for: 256, 1024.")
    point = CostPoint(length=1024, cached_ms=50.0, naive_ms=1500.0, cached_repeats=3, naive_repeats=2)
    cpu, gpu = text.cpu_vs_gpu(False, point), text.cpu_vs_gpu(True, None)
    assert cpu.startswith("Running on the CPU") and cpu.endswith("Here the cache wins 30.0× at L = 1024.")
    assert gpu.startswith("Running on CUDA") and "Here the cache wins" not in gpu
