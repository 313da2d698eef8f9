"""The upstream adapter asks a tree's digest of a box both ways a shard is held: as the box
``shard_region`` recovers (a receiver's) and as a view of the tensor (a publisher's shard, strided
for a column split). A tree whose ``tensor_digest`` reads a strided view as if it were contiguous
(``as_strided`` instead of ``reshape``) disagrees with itself there, and is told so; a right one
answers the digest. In-process, with a stand-in ``verify`` module built on the reference's digest."""

from __future__ import annotations

import base64
import types
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from refitwire import tensor_digest  # noqa: E402
from refitwire.compat.upstream.adapter_testee import Adapter  # noqa: E402


def _verify(strided_as_flat: bool) -> Any:
    def digest(tensor: Any) -> str:
        flat = tensor.as_strided((tensor.numel(),), (1,)) if strided_as_flat else tensor.reshape(-1)
        return tensor_digest(flat.contiguous().view(torch.uint8).numpy())

    def shard_region(full: Any, shape: Any, offset: Any, extent: Any) -> Any:
        view = full.reshape(tuple(shape))
        for d, (start, length) in enumerate(zip(offset, extent)):
            view = view.narrow(d, start, length)
        return view.contiguous()

    return types.SimpleNamespace(tensor_digest=digest, shard_region=shard_region)


def _ask(strided_as_flat: bool) -> dict[str, Any]:
    data = bytes(range(256)) * 3  # a float32 [16, 12], as bytes
    request = {"cmd": "digest", "seq": 1, "data_b64": base64.b64encode(data).decode(), "dtype": "float32",
               "shape": [16, 12], "box": {"shard_offset": [0, 4], "shape": [16, 4]}}  # fmt: skip
    return Adapter(None, _verify(strided_as_flat)).digest(1, request)


def test_a_tree_that_digests_a_strided_shard_wrongly_is_told() -> None:
    with pytest.raises(Exception, match="as a view of its tensor"):
        _ask(strided_as_flat=True)


def test_a_right_tree_answers_the_digest_of_the_box() -> None:
    import numpy as np

    box = np.frombuffer(bytes(range(256)) * 3, dtype=np.float32).reshape(16, 12)[:, 4:8]
    assert _ask(strided_as_flat=False)["digest"] == tensor_digest(np.ascontiguousarray(box).view(np.uint8))
