"""autoreg_ui.state: the server's torch thread count, read from the operator's environment."""
from autoreg_ui import state


def test_torch_threads_default_value_and_bad_values():
    assert state.torch_threads({}) == 1
    assert state.torch_threads({state.ENV_TORCH_THREADS: "4"}) == 4
    assert state.torch_threads({state.ENV_TORCH_THREADS: "0"}) == 1
    assert state.torch_threads({state.ENV_TORCH_THREADS: "all"}) == 1
