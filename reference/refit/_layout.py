"""Real model layouts: the tensors a checkpoint holds, scaled to a byte budget, sharded as engines do.

A layout is the list of a model's tensors (name, dtype, shape). It comes from a
``.safetensors`` file's header (only the header is read), from a JSON list of
``{"name", "dtype", "shape"}`` objects, or from a preset shaped like a public
configuration:

* ``dense-8b``: a Llama-3.1-8B-shaped dense model, 32 layers, hidden 4096, GQA
  (32 query, 8 key/value heads of 128), SwiGLU 14336, vocab 128256, untied head:
  291 tensors, 16.1 GB in bfloat16;
* ``moe-30b-a3b``: a Qwen3-30B-A3B-shaped MoE model, 48 layers, hidden 2048, 32
  query and 4 key/value heads of 128 with q/k norms, 128 experts of SwiGLU 768
  per layer plus the router, vocab 151936, untied head: 18,867 tensors, 61 GB.

:func:`scale_layout` scales every dimension by one factor (shape ratios and the
tensor count kept, every dimension at least 1) to the smallest layout holding a
byte budget. :func:`layout_model` shards it as the engines do (:func:`split_of`).
Pure Python: no torch, no NIXL.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from ._errors import LayoutError
from ._model import Model, Split, TensorSpec, element_size

__all__ = ["PRESETS", "LayoutError", "layout_model", "parse_bytes", "read_layout", "scale_layout", "split_of"]

Entry = tuple[str, str, tuple[int, ...]]  # name, dtype, shape

# safetensors dtype names, and the torch-style names a JSON layout may use.
_DTYPES = {"BF16": "bfloat16", "F16": "float16", "F32": "float32",
           "bfloat16": "bfloat16", "float16": "float16", "float32": "float32"}  # fmt: skip


def _dense_8b() -> list[Entry]:
    h, kv, inter, vocab = 4096, 1024, 14336, 128256
    out: list[Entry] = [("model.embed_tokens.weight", "bfloat16", (vocab, h))]
    for i in range(32):
        p = f"model.layers.{i}."
        out += [
            (p + "self_attn.q_proj.weight", "bfloat16", (h, h)),
            (p + "self_attn.k_proj.weight", "bfloat16", (kv, h)),
            (p + "self_attn.v_proj.weight", "bfloat16", (kv, h)),
            (p + "self_attn.o_proj.weight", "bfloat16", (h, h)),
            (p + "mlp.gate_proj.weight", "bfloat16", (inter, h)),
            (p + "mlp.up_proj.weight", "bfloat16", (inter, h)),
            (p + "mlp.down_proj.weight", "bfloat16", (h, inter)),
            (p + "input_layernorm.weight", "bfloat16", (h,)),
            (p + "post_attention_layernorm.weight", "bfloat16", (h,)),
        ]
    return out + [("model.norm.weight", "bfloat16", (h,)), ("lm_head.weight", "bfloat16", (vocab, h))]


def _moe_30b_a3b() -> list[Entry]:
    h, q, kv, head, inter, experts, vocab = 2048, 4096, 512, 128, 768, 128, 151936
    out: list[Entry] = [("model.embed_tokens.weight", "bfloat16", (vocab, h))]
    for i in range(48):
        p = f"model.layers.{i}."
        out += [
            (p + "self_attn.q_proj.weight", "bfloat16", (q, h)),
            (p + "self_attn.k_proj.weight", "bfloat16", (kv, h)),
            (p + "self_attn.v_proj.weight", "bfloat16", (kv, h)),
            (p + "self_attn.o_proj.weight", "bfloat16", (h, q)),
            (p + "self_attn.q_norm.weight", "bfloat16", (head,)),
            (p + "self_attn.k_norm.weight", "bfloat16", (head,)),
            (p + "mlp.gate.weight", "bfloat16", (experts, h)),
        ]
        for e in range(experts):
            x = f"{p}mlp.experts.{e}."
            out += [
                (x + "gate_proj.weight", "bfloat16", (inter, h)),
                (x + "up_proj.weight", "bfloat16", (inter, h)),
                (x + "down_proj.weight", "bfloat16", (h, inter)),
            ]
        out += [
            (p + "input_layernorm.weight", "bfloat16", (h,)),
            (p + "post_attention_layernorm.weight", "bfloat16", (h,)),
        ]
    return out + [("model.norm.weight", "bfloat16", (h,)), ("lm_head.weight", "bfloat16", (vocab, h))]


PRESETS = {"dense-8b": _dense_8b, "moe-30b-a3b": _moe_30b_a3b}

_SUFFIX = {"": 1, "B": 1, "K": 1000, "KB": 1000, "M": 10**6, "MB": 10**6, "G": 10**9, "GB": 10**9,
           "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}  # fmt: skip


def parse_bytes(text: str) -> int:
    """``"1GiB"`` -> 1073741824; ``"512MiB"``, ``"3G"`` (10**9), ``"1048576"`` and ``"1.5GiB"`` too."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*", text)
    unit = m.group(2).upper() if m else ""
    if m is None or unit not in _SUFFIX:
        raise ValueError(f"{text!r} is not a byte count (e.g. 1048576, 512MiB, 1GiB, 2GB)")
    value = int(float(m.group(1)) * _SUFFIX[unit])
    if value <= 0:
        raise ValueError(f"{text!r}: a byte count must be positive")
    return value


def read_layout(source: str) -> list[Entry]:
    """A preset's name, a ``.safetensors`` file (its header only) or a JSON list of tensors."""
    if source in PRESETS:
        return PRESETS[source]()
    path = Path(source)
    if not path.is_file():
        raise LayoutError(f"layout {source!r}: no such file, and not a preset ({', '.join(PRESETS)})")
    if path.suffix == ".safetensors":
        entries = _safetensors_header(path)
    else:
        try:
            listed = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise LayoutError(f"layout {source}: not a JSON list of tensors ({exc})") from None
        entries = _json_entries(source, listed)
    if not entries:
        raise LayoutError(f"layout {source}: holds no tensors")
    return entries


def _safetensors_header(path: Path) -> list[Entry]:
    from safetensors import safe_open  # reads the header; tensors are only mapped, never read

    try:
        with safe_open(str(path), framework="numpy") as f:
            found = [(name, f.get_slice(name)) for name in f.keys()]  # noqa: SIM118 (not a dict)
            raw = [(name, s.get_dtype(), tuple(int(d) for d in s.get_shape())) for name, s in found]
    except Exception as exc:  # the package raises its own error types for a bad header
        raise LayoutError(f"layout {path}: not a safetensors file ({exc})") from None
    return [(name, _dtype(str(path), name, dtype), shape) for name, dtype, shape in raw]


def _json_entries(source: str, listed: object) -> list[Entry]:
    if not isinstance(listed, list):
        raise LayoutError(f"layout {source}: must be a JSON list of {{name, dtype, shape}} objects")
    out: list[Entry] = []
    for i, item in enumerate(listed):
        if not (isinstance(item, dict) and {"name", "dtype", "shape"} <= set(item)):
            raise LayoutError(f"layout {source}: /{i} must be an object with name, dtype and shape")
        name, shape = item["name"], item["shape"]
        ok = isinstance(shape, list) and all(type(d) is int and d > 0 for d in shape)
        if not isinstance(name, str) or not name or not ok:
            raise LayoutError(f"layout {source}: /{i} needs a non-empty name and positive integer dims")
        out.append((name, _dtype(source, name, item["dtype"]), tuple(shape)))
    if len({e[0] for e in out}) != len(out):
        raise LayoutError(f"layout {source}: a tensor name appears twice")
    return out


def _dtype(source: str, name: str, dtype: object) -> str:
    if not isinstance(dtype, str) or dtype.removeprefix("torch.") not in _DTYPES:
        raise LayoutError(
            f"layout {source}: tensor {name!r} has dtype {dtype!r}; the refit fills bfloat16, float16 "
            "and float32 (BF16, F16, F32)"
        )
    return _DTYPES[dtype.removeprefix("torch.")]


def layout_bytes(entries: Sequence[Entry]) -> int:
    return sum(math.prod(shape) * element_size(dtype) for _, dtype, shape in entries)


def _scaled_shape(shape: tuple[int, ...], factor: float) -> tuple[int, ...]:
    return tuple(max(1, round(d * factor)) for d in shape)


def scale_layout(entries: Sequence[Entry], nbytes: int) -> list[Entry]:
    """The smallest scaling of every dimension by one factor that holds at least ``nbytes``."""
    kinds = Counter((dtype, shape) for _, dtype, shape in entries)  # ~19,000 tensors, ~20 shapes

    def size(factor: float) -> int:
        return sum(
            n * math.prod(_scaled_shape(shape, factor)) * element_size(t) for (t, shape), n in kinds.items()
        )

    lo, hi = 0.0, 1.0
    while size(hi) < nbytes:
        lo, hi = hi, hi * 2
    for _ in range(40):  # the size only grows with the factor
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if size(mid) < nbytes else (lo, mid)
    return [(n, t, _scaled_shape(shape, hi)) for n, t, shape in entries]


_EXPERT = re.compile(r"\.experts\.(\d+)\.")
_COLUMN = ("q_proj", "k_proj", "v_proj", "qkv_proj", "gate_proj", "up_proj", "gate_up_proj", "w1", "w3")
_ROW = ("o_proj", "down_proj", "w2")


def split_of(name: str, shape: tuple[int, ...], *, publisher: bool) -> Split:
    """How the engines split a tensor: column-parallel projections along dim 0, row-parallel
    ones (``o_proj``, ``down_proj``) along dim 1, the embedding and head by vocabulary (dim 0),
    norms, biases and the router replicated. Experts: publishers (trainers, expert-parallel)
    hold each expert whole on one rank; receivers (engines, tensor-parallel) split every
    expert's projections like a dense layer's.
    """
    if len(shape) < 2 or name.endswith("mlp.gate.weight") or "norm" in name:
        return None
    if publisher and _EXPERT.search(name):
        return "expert"
    parts = name.split(".")
    proj = parts[-2] if len(parts) >= 2 else name
    return 1 if proj in _ROW else 0


def layout_model(source: str, nbytes: int | None = None) -> Model:
    """The layout of ``source`` (scaled to ``nbytes`` if given) as a :class:`Model`."""
    entries = read_layout(source)
    if nbytes is not None:
        entries = scale_layout(entries, nbytes)
    experts: dict[str, int] = {}  # layer prefix -> expert count
    for name, _, _ in entries:
        m = _EXPERT.search(name)
        if m:
            experts[name[: m.start()]] = max(experts.get(name[: m.start()], 0), int(m.group(1)) + 1)
    specs = []
    for name, dtype, shape in entries:
        m = _EXPERT.search(name)
        expert = (int(m.group(1)), experts[name[: m.start()]]) if m else None
        specs.append(TensorSpec(name, dtype, shape, split_of(name, shape, publisher=True),
                                split_of(name, shape, publisher=False), expert))  # fmt: skip
    label = Path(source).name if source not in PRESETS else source
    return Model(label if nbytes is None else f"{label}@{nbytes}B", tuple(specs))


def resolve_model(model: str, layout: str | None) -> Model:
    """What every process of a run builds: ``model`` alone (a name or ``"<N>B"``, see
    :func:`~refitwire.refit._model.model_named`), or ``layout`` scaled to ``"<N>B"`` if ``model`` is one."""
    from ._model import model_named

    if layout is None:
        return model_named(model)
    sized = model.endswith("B") and model[:-1].isdigit()
    return layout_model(layout, int(model[:-1]) if sized else None)
