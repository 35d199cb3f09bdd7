"""What the cost page says, with this model's shape and this run's measurements."""
import pytest

from autoreg_core.engine.model_spec import PRESETS
from autoreg_core.experiments.kv_cost import CostPoint
from autoreg_ui.lessons.cost import text


def test_the_shape_and_the_learners_sequence_carry_their_numbers():
    spec = PRESETS["70B model with GQA, 128K context"]
    intro = text.counts_intro(spec)
    assert f"{spec.n_layers} layers, {spec.n_heads} query heads of size {spec.head_dim}" in intro
    assert f"N_body = {spec.body_params:,} weights" in intro and f"V = {spec.vocab:,}" in intro
    assert text.your_sequence(12, 11, 2048, 2048) == (
        "Your sequence: 12 tokens; its KV cache holds 11 positions, 2.00 KiB measured (2.00 KiB by the formula). "
        "Every step adds one position and one decode step of the race below.")
    assert text.attention_share(512, 0.0312, 3070) == (
        "At L = 512 attention over the cache is 3.1% of a cached step's FLOPs (here the weights dominate, so a cached "
        "step costs nearly the same at short lengths). Its share grows with L: for this model it equals the layers' "
        "weight FLOPs at L ≈ 3,070.")
    assert "not constant-cost" in text.attention_share(2048, 0.345, 3070)
    assert "past the point" in text.attention_share(4096, 0.55, 3070)


def _budgets():
    from autoreg_core.experiments.roofline import StepBudget

    low = StepBudget(1, 512, 500_000_000, 1_000_000, 300_000_000, bandwidth=10e9, peak_flops=100e9)  # 0.6 vs ridge 10
    high = StepBudget(1, 512, 500_000_000, 1_000_000, 300_000_000, bandwidth=10e9, peak_flops=1e9)  # 0.6 vs ridge 0.1
    assert low.intensity < low.ridge and high.intensity > high.ridge
    return low, high


def test_the_bound_named_follows_the_measured_intensity_and_ridge():
    low, high = _budgets()
    at_low, at_high = text.memory_bound(low, 5.0), text.memory_bound(high, 5.0)
    assert "**memory-bound**" in at_low and "compute-bound**" not in at_low
    assert "**compute-bound**" in at_high and "**memory-bound**" not in at_high
    # the naive step too: 5 FLOP/byte is under a ridge of 10 and past a ridge of 0.1
    assert "5.0 FLOP/byte, 2.0× below this machine's ridge at 10.0, so it is still memory-bound here" in at_low
    assert "5.0 FLOP/byte, 50.0× past this machine's ridge at 0.1, so it is compute-bound here" in at_high
    assert "so it is compute-bound here" in text.memory_bound(low, 40.0)


@pytest.mark.parametrize("ratio, reading", [
    (1.4, "slower than linear (×1.40 per doubling): fixed costs per step still weigh at these lengths"),
    (1.6, "about linear (×1.60 per doubling)"),
    (1.97, "about linear (×1.97 per doubling)"),
    (2.4, "about linear (×2.40 per doubling)"),
    (2.6, "faster than linear, short of quadratic (×2.60 per doubling)"),
    (3.4, "faster than linear, short of quadratic (×3.40 per doubling)"),
    (3.6, "about quadratic (×3.60 per doubling)"),
    (4.0, "about quadratic (×4.00 per doubling)"),
])
def test_growth_is_read_from_the_ratio_per_doubling(ratio, reading):
    assert text.growth_reading(ratio) == reading


def test_naive_growth_sentence_says_the_step_is_linear_and_the_total_quadratic():
    assert text.naive_growth_sentence(1.97, 512, 1024, 2.29, 0.143) == (
        "One naive step's time grew **about linear (×1.97 per doubling)** from L = 512 to 1,024, measured. By the "
        "counts it grows about linear (×2.29 per doubling): at L = 1,024 causal attention is 14% of a naive step's "
        "FLOPs, and the rest is mostly its 2·N_body·L weight FLOPs. Over T tokens the naive steps push "
        r"$1 + 2 + \dots + T = \frac{T(T+1)}{2}$ positions through the layers (quadratic), and their causal attention "
        r"grows with T³: $\frac{T(T+1)(T+2)}{6}$ scores per head and layer.")
    assert "**about quadratic (×3.90 per doubling)**" in text.naive_growth_sentence(3.9, 512, 1024, 2.29, 0.143)
    assert "square" not in text.MAX_LENGTH_HELP and "four times" not in text.MAX_LENGTH_HELP


def test_the_length_help_says_flops_grow_with_l_and_time_need_not():
    """The layers' FLOPs of a naive step are ∝ L, attention's grow faster, the logits' are fixed; a measured time
    can grow by less than ×2 per doubling at short lengths."""
    from autoreg_core.engine.model_spec import ModelSpec

    said = text.MAX_LENGTH_HELP
    assert "its time grows at least in proportion" not in said and "at least twice as slow" not in said
    assert ("A naive step pushes all L positions through the layers, so their FLOPs grow in proportion to L, and "
            "causal attention's with L² (a larger share the longer the text); only the last position's logits cost "
            "the same at every length.") in said
    assert ("Its measured time need not follow the FLOPs: at short lengths fixed costs per step weigh, and a doubling "
            "of L can take less than twice the time.") in said
    smol = ModelSpec.preset("SmolLM2-135M", n_layers=30, n_heads=9, n_kv_heads=3, head_dim=64, hidden=576,
                            vocab=49_152, n_params=134_515_008, seq_len=8192, weight_bytes=4, cache_bytes=4, tied=True)
    for length in (16, 256, 2048):  # layers ∝ L, attention ∝ L(L + 1)/2, the logits fixed
        assert smol.flops_step(length, False) == (length * smol.flops_layers_per_token + smol.flops_lm_head
                                                  + length * (length + 1) // 2 * smol.attention_flops_per_key)
    # the fixed logits keep even the counted ratio under ×2 at the shortest lengths, and a measured one can be too
    assert smol.flops_step(2, False) / smol.flops_step(1, False) < 2 < smol.flops_step(2048, False) / smol.flops_step(
        1024, False)
    assert text.growth_reading(1.4).startswith("slower than linear")


def test_batching_raises_intensity_only_until_the_cache_reads_dominate():
    from autoreg_core.engine.model_spec import ModelSpec
    from autoreg_core.experiments.roofline import step_budget

    smol = ModelSpec.preset("SmolLM2-135M", n_layers=30, n_heads=9, n_kv_heads=3, head_dim=64, hidden=576,
                            vocab=49_152, n_params=134_515_008, seq_len=8192, weight_bytes=4, cache_bytes=4, tied=True)
    long = step_budget(smol, 1, 2048, bandwidth=10e9, peak_flops=100e9)  # ridge 10 FLOP/byte
    assert text.batched_intensity(long, 32) == pytest.approx(step_budget(smol, 32, 2048).intensity)
    assert text.batched_intensity_sentence(long) == (
        "Batching shares only the weight reads: each row reads its own KV cache. At L = 2,048, 32 rows do 3.69 "
        "FLOP/byte, and no batch gets past 4.35 FLOP/byte (a row's FLOPs ÷ its cache bytes), below this machine's "
        "ridge at 10.0: at this length a batched decode step stays memory-bound however many rows share the weights.")
    short = step_budget(smol, 1, 128, bandwidth=10e9, peak_flops=100e9)  # the same ridge, a short cache
    assert text.batched_intensity_sentence(short) == (
        "Batching shares only the weight reads: each row reads its own KV cache. At L = 128, 32 rows do 12.23 "
        "FLOP/byte; about 25 rows would reach this machine's ridge at 10.0 (no batch gets past 47.1 FLOP/byte, a "
        "row's FLOPs ÷ its cache bytes).")
    assert text.batched_intensity(short, 25) == pytest.approx(10.0, abs=0.2)  # the ridge, where the sentence says
    assert "the same way" not in text.memory_bound(long, 100.0)


def test_the_sections_notice_is_read_from_the_measurement():
    low, high = _budgets()
    assert text.memory_notice(low) == ("At L = 512 a decode step does 0.60 FLOP per byte it reads: 16.7× below this "
                                       "machine's ridge at 10.0 FLOP/byte (measured now), so reading bytes, not "
                                       "arithmetic, sets its pace here.")
    assert text.memory_notice(high) == ("At L = 512 a decode step does 0.60 FLOP per byte it reads: 6.0× past this "
                                        "machine's ridge at 0.1 FLOP/byte (measured now), so arithmetic, not reading "
                                        "bytes, sets its pace here.")


def test_run_prompt_and_the_device_paragraph_follow_what_was_measured():
    assert text.press_run([]) == "Press **Run the race** to measure this model on this machine."
    assert text.press_run([256, 1024]).endswith(" Results are kept for: 256, 1024.")
    point = CostPoint(length=1024, cached_ms=50.0, naive_ms=1500.0, cached_repeats=3, naive_repeats=2)
    cpu, gpu = text.cpu_vs_gpu(False, point), text.cpu_vs_gpu(True, None)
    assert cpu.startswith("Running on the CPU") and cpu.endswith("Here the cache wins 30.0× at L = 1024.")
    assert "ridge point" in cpu and "one after another" not in cpu and "cache's advantage keeps growing" in cpu
    assert ("Either way the naive total's weight work grows as T² against the cache's T (attention adds a T² term "
            "to the cached total too, and a T³ one to the naive), so the cache's advantage keeps growing with "
            "length.") in cpu
    assert gpu.startswith("Running on CUDA") and "Here the cache wins" not in gpu


def test_the_naive_totals_the_sentence_names_are_the_models_counts(tiny):
    """1 + … + T positions (steps of 1 … T positions), and Σ L(L+1)/2 = T(T+1)(T+2)/6 causal scores per head and
    layer: the total attention is cubic, not quadratic."""
    spec = tiny.spec
    for T in (1, 2, 7, 100):
        assert spec.positions_total(T, cached=False) == sum(range(1, T + 1)) == T * (T + 1) // 2
        per = spec.n_layers * spec.n_heads
        assert spec.dot_products_total(T, cached=False) == per * sum(spec.dot_products_step(L, False) // per
                                                                     for L in range(1, T + 1))
        assert spec.dot_products_total(T, cached=False) == per * T * (T + 1) * (T + 2) // 6
    said = text.naive_growth_sentence(1.97, 512, 1024, 2.29, 0.143)
    assert "What is quadratic is the total" not in said and "every one of the T steps is that long" not in said
