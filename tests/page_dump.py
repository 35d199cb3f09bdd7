"""Dump every page's element tree (types, labels, bodies, widget keys) under Streamlit's AppTest, numbers masked.

Usage, from a checkout's root:  ``python tests/page_dump.py OUT.json``

Used to check that a restructuring leaves every page as it was: run it on both checkouts and compare the two
files with ``compare_dumps.py``. Self-contained on purpose: it imports nothing of the project by module path
(the restructuring moves modules); it drives the app only through ``app.py`` under AppTest and opens pages by
their URL path names, hard-coded below.

The model is a tiny random Llama (the same recipe as ``tests/tiny.py``, built here without project imports),
saved to a temporary folder and allowlisted, as the ``open_page`` fixture of ``tests/conftest.py`` does.
Every page is opened in a fresh AppTest (a new tab): app.py is run once (a bare ``/`` opens Start here), then
switched to the page by URL path and run again. The step and attention pages are dumped again after one click
on their "Next token" button (keys ``step:after_next_token`` and ``attention:after_next_token``).

Each line is one node of the element tree in order, indented by depth:
``type [key=...] [label=...] [options=...] [value=...] [help=...] [disabled]``. Masked: every number
(runs of digits, decimals, thousands separators) becomes ``#``; a number's time unit becomes ``# <time>`` and
a measured rate's ``# <bytes>/s`` (the unit moves with the load); "The machine was busy ..." sentences and
elements are dropped and "measured on this server just now / # s ago" reads ``<when>`` (load and timing
dependent); the temporary model folder becomes ``<MODEL>``; plotly charts are reduced to their title,
dataframes to their column names, buttons carry no value.
"""
from __future__ import annotations

import json
import logging
import os
import re
import shutil
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

ROOT = Path.cwd().resolve()
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]  # not tests/
sys.path.insert(0, str(ROOT))

PAGES = ["start", "step", "tokens", "attention", "sampling", "cost", "inside", "serving", "glossary", "class",
         "hood", "tricks"]
NEXT_TOKEN_PAGES = ("step", "attention")
NEXT_TOKEN_LABEL = "Next token"
MODEL_KEY = "model_name"  # autoreg_ui.keys.MODEL, written out so this file imports nothing of the project
TIMEOUT = 300

NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
# a measured time is written "850 ms" or "1.20 s" (autoreg_ui.format.ms) and "µs" elsewhere: after masking, the unit
# can still change with the machine's load, so every masked time reads "# <time>"
TIME_UNIT = re.compile(r"# ?(?:ns|µs|us|ms|s)\b")
RATE_UNIT = re.compile(r"# ?(?:B|KiB|MiB|GiB|TiB|kB|KB|MB|GB|TB)/s\b")  # a measured bandwidth, unit and all
# what depends on the machine's load or on when the roofs were measured (autoreg_ui/measuring_text.py, the cost race)
BUSY = re.compile(r" ?The machine was busy (?:then|during this measurement|during this race) \(load .*?"
                  r"(?:within a minute\.|for clean numbers\.|for clean curves\.)")
WHEN = re.compile(r"measured on this server (?:just now|# <time> ago|# min ago)")


# --- the tiny model (tests/tiny.py's recipe) -------------------------------------------------------------------

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


def save_tiny_model(folder: Path) -> None:
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(CORPUS, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", bos_token="<|im_start|>",
                                   pad_token="<|endoftext|>", unk_token="<|endoftext|>")
    fast.chat_template = CHAT_TEMPLATE
    config = LlamaConfig(vocab_size=len(fast), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                         max_position_embeddings=256, eos_token_id=fast.eos_token_id,
                         pad_token_id=fast.pad_token_id, bos_token_id=fast.bos_token_id,
                         tie_word_embeddings=True, attn_implementation="sdpa")
    torch.manual_seed(0)
    model = LlamaForCausalLM(config)
    model.generation_config.eos_token_id = fast.eos_token_id
    model.generation_config.pad_token_id = fast.pad_token_id
    model.eval().save_pretrained(folder)
    fast.save_pretrained(folder)


# --- AppTest set-up (as tests/conftest.py) -----------------------------------------------------------------------

def keep_streamlit_on_navigation() -> None:
    """conftest's work-around: AppTest would re-detect the legacy ``pages/`` mode and skip app.py on reruns."""
    from streamlit.runtime.pages_manager import PagesManager

    original = PagesManager.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    PagesManager.__init__ = init


def ok(at, where: str):
    if at.exception:
        raise RuntimeError(f"{where}: {[e.value for e in at.exception]}")
    return at


def open_page(model: str, url_path: str):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.session_state[MODEL_KEY] = model
    ok(at.run(), f"{url_path}: first run")
    pages = {info.get("url_pathname"): page_hash for page_hash, info in at._registered_pages.items()}
    if url_path not in pages:
        raise RuntimeError(f"no page with URL path {url_path!r}; the app has {sorted(map(str, pages))}")
    at._page_hash = pages[url_path]  # what switch_page does, by URL path instead of file
    return ok(at.run(), url_path)


# --- the dump --------------------------------------------------------------------------------------------------

def _q(value) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _attr(node, name):
    try:
        value = getattr(node, name)
    except Exception:  # noqa: BLE001 - a proto without the field, or a value AppTest cannot build
        return None
    return value


def _plotly_title(proto) -> str | None:
    try:
        layout = json.loads(proto.spec).get("layout", {})
    except Exception:  # noqa: BLE001
        return None
    title = layout.get("title")
    if isinstance(title, dict):
        title = title.get("text")
    return title if isinstance(title, str) else None


def describe(node) -> str:
    from streamlit.testing.v1.element_tree import Block, Dataframe, UnknownElement, Widget

    parts = [node.type]
    key = _attr(node, "key")
    if key:
        parts.append(f"key={_q(key)}")
    label = _attr(node, "label")
    if isinstance(label, str) and label:
        parts.append(f"label={_q(label)}")
    if isinstance(node, Block):
        return " ".join(parts)
    if isinstance(node, Widget):
        options = _attr(node, "options")
        if options and not isinstance(options, (str, bytes)):
            try:
                parts.append(f"options={_q([str(o) for o in options])}")
            except TypeError:
                pass
        if node.type != "button":
            value = _attr(node, "value")
            parts.append(f"value={_q(value if isinstance(value, (str, int, float, bool, type(None))) else str(value))}")
        if _attr(node, "disabled"):
            parts.append("disabled")
    elif isinstance(node, Dataframe):
        try:
            parts.append(f"columns={_q([str(c) for c in node.value.columns])}")
        except Exception:  # noqa: BLE001
            pass
    elif isinstance(node, UnknownElement):
        if node.type == "plotly_chart":
            title = _plotly_title(node.proto)
            if title:
                parts.append(f"title={_q(title)}")
        else:
            for field in ("body", "text", "value"):
                value = _attr(node.proto, field)
                if isinstance(value, str) and value:
                    parts.append(f"{field}={_q(value)}")
                    break
    else:
        value = _attr(node, "value")
        if isinstance(value, str) and value:
            parts.append(f"value={_q(value)}")
        if node.type == "metric":
            delta = _attr(node.proto, "delta")
            if delta:
                parts.append(f"delta={_q(delta)}")
    help_text = _attr(node.proto, "help") if node.proto is not None else None
    if isinstance(help_text, str) and help_text:
        parts.append(f"help={_q(help_text)}")
    return " ".join(parts)


def walk(node, depth: int, out: list[str], mask) -> None:
    from streamlit.testing.v1.element_tree import Block

    value = _attr(node, "value") if node.type in ("warning", "info", "caption", "markdown") else None
    if isinstance(value, str) and value.startswith("The machine was busy"):
        return  # said only when the machine is loaded (see BUSY)
    out.append("  " * depth + mask(describe(node)))
    if isinstance(node, Block):
        for index in sorted(node.children):
            walk(node.children[index], depth + 1, out, mask)


def dump_tree(at, mask) -> list[str]:
    out: list[str] = []
    walk(at._tree, 0, out, mask)
    return out


def make_mask(model: str):
    spellings = sorted({model, urllib.parse.quote(model), urllib.parse.quote(model, safe=""),
                        json.dumps(model)[1:-1]}, key=len, reverse=True)

    def mask(text: str) -> str:
        for spelling in spellings:
            text = text.replace(spelling, "<MODEL>")
        text = TIME_UNIT.sub("# <time>", NUMBER.sub("#", text))
        text = RATE_UNIT.sub("# <bytes>/s", text)
        return WHEN.sub("measured on this server <when>", BUSY.sub("", text))

    return mask


def check_imported_from_root() -> None:
    """The app must run this checkout's code, not an installed copy or the other checkout's."""
    for name in ("autoreg_core", "autoreg_ui"):
        module = sys.modules.get(name)
        where = Path(getattr(module, "__file__", "") or "").resolve()
        if module is None or ROOT not in where.parents:
            raise RuntimeError(f"{name} was imported from {where}, not from {ROOT}")


def click_next_token(at, url_path: str) -> bool:
    buttons = [b for b in at.button if b.label == NEXT_TOKEN_LABEL]
    if not buttons:
        return False
    ok(buttons[0].click().run(), f"{url_path}: Next token")
    return True


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    out_path = Path(argv[1])
    started = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="autoreg_page_dump_"))
    model = str(work / "tiny_model")
    os.environ["AUTOREG_MAX_SESSIONS"] = "0"  # as conftest: every AppTest is a new tab, no seat cap
    os.environ["AUTOREG_ALLOWED_MODELS"] = model
    os.environ["AUTOREG_CLASS_DB"] = str(work / "classes.sqlite3")  # a fresh class store, not the user's
    os.environ.setdefault("AUTOREG_TORCH_THREADS", "1")
    try:
        import torch

        torch.set_num_threads(1)
        torch.manual_seed(0)
        save_tiny_model(Path(model))
        keep_streamlit_on_navigation()
        # "missing ScriptRunContext!" (a page's code asking for its tab outside a run) is noise here
        logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").addFilter(
            lambda record: "missing ScriptRunContext" not in record.getMessage())
        mask = make_mask(model)
        dump: dict[str, list[str]] = {}
        for url_path in PAGES:
            t = time.perf_counter()
            at = open_page(model, url_path)
            dump[url_path] = dump_tree(at, mask)
            if url_path in NEXT_TOKEN_PAGES and click_next_token(at, url_path):
                dump[f"{url_path}:after_next_token"] = dump_tree(at, mask)
            check_imported_from_root()
            print(f"{url_path}: {len(dump[url_path])} lines, {time.perf_counter() - t:.1f} s", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out_path.write_text(json.dumps(dump, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{out_path}: {len(dump)} pages, {sum(map(len, dump.values()))} lines, "
          f"{time.perf_counter() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
