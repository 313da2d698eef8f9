"""``--device``: every branch of the CUDA path that runs without a GPU (tools/gpu-check.sh runs the rest)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from refitwire.refit._device import check_device, mem_type, parse_device
from refitwire.refit._region import Region


@pytest.mark.parametrize(
    ("spec", "parsed"), [("cpu", ("cpu", None)), ("cuda", ("cuda", None)), ("cuda:3", ("cuda", 3))]
)
def test_device_specs(spec: str, parsed: tuple[str, int | None]) -> None:
    assert parse_device(spec) == parsed
    assert mem_type(spec) == ("DRAM" if spec == "cpu" else "VRAM")


@pytest.mark.parametrize("spec", ["gpu", "cpu:0", "cuda:", "cuda:x", "CUDA", ""])
def test_a_bad_device_spec_is_one_line(spec: str) -> None:
    with pytest.raises(ValueError, match=r"^--device .*: expected cpu, cuda or cuda:N$"):
        parse_device(spec)


def test_a_cuda_device_this_machine_lacks_is_refused_in_one_line() -> None:
    torch = pytest.importorskip("torch")
    check_device("cpu")
    if torch.cuda.is_available():
        check_device("cuda")
        with pytest.raises(ValueError, match="CUDA device"):
            check_device(f"cuda:{torch.cuda.device_count()}")
        return
    with pytest.raises(ValueError, match=r"CPU build|no CUDA device") as caught:
        check_device("cuda:0")
    assert "\n" not in str(caught.value)


def test_the_cli_refuses_a_missing_gpu_before_starting_anything(capsys: pytest.CaptureFixture[str]) -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("nixl_cu12")
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: tools/gpu-check.sh runs the CUDA refit")
    from refitwire.cli import main

    assert main(["refit", "--device", "cuda", "--model", "tiny", "--steps", "1"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "--device cuda:" in err  # no child ever started


class _Recorder:
    """Records what the prepared pull asks NIXL for: the descriptor lists it would prepare."""

    def __init__(self) -> None:
        self.lists: list[tuple[str | None, np.ndarray[Any, Any], str]] = []
        self.reads: list[tuple[str, np.ndarray[Any, Any]]] = []

    def peer_memory(self, peer: str) -> tuple[str, int]:
        return ("VRAM", 2)

    def prepare_dlist(self, peer: str | None, descs: np.ndarray[Any, Any], mem: str) -> int:
        self.lists.append((peer, descs, mem))
        return len(self.lists)

    def prepared_read(self, peer: str, local: int, remote: int, indices: np.ndarray[Any, Any]) -> str:
        self.reads.append((peer, indices))
        return f"req-{len(self.reads)}"

    def drop_prepared(self, requests: list[Any], dlists: list[Any]) -> None:
        pass


def test_prepared_reads_into_vram_name_the_device_on_both_sides() -> None:
    from refitwire.refit._prepared import PreparedPull
    from refitwire.refit._pull import Piece, Segment

    pieces = [Piece("pub-0", (Segment(0, 0x1000, 0, 64), Segment(1, 0x2000, 256, 32)), 96),
              Piece("pub-0", (Segment(2, 0x3000, 512, 16),), 16)]  # fmt: skip
    agent = _Recorder()
    prepared = PreparedPull(agent, "sig", pieces, Region(0x9000, 1024, "VRAM", 1))
    (local_peer, local, local_mem), (remote_peer, remote, remote_mem) = agent.lists
    assert (local_peer, local_mem, remote_peer, remote_mem) == (None, "VRAM", "pub-0", "VRAM")
    assert local.tolist() == [[0x9000, 64, 1], [0x9100, 32, 1], [0x9200, 16, 1]]  # our device: 1
    assert remote.tolist() == [[0x1000, 64, 2], [0x2000, 32, 2], [0x3000, 16, 2]]  # the peer's: 2
    assert [i.tolist() for _, i in agent.reads] == [[0, 1], [2]]  # one request per piece
    assert prepared.requests == ["req-1", "req-2"]
