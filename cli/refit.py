"""Run a real NIXL refit on this machine: publishers, receivers, verification, verdicts.

Starts N publisher and M receiver processes with different shardings of a
synthetic model; each step the publishers post their blobs to a store (a directory or Redis)
and the receivers discover, check, read over NIXL (UCX), verify every shard and
install the step only when every shard they need is verified. Progress goes to
stderr, the per-step verdict table to stdout. Exit 0 when every step was verified
and installed by every receiver (and each holds exactly that step's values), 1
otherwise, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

from refitwire.cli._io import fail
from refitwire.wire import Registry


def _require_extra() -> None:
    # The processes that move tensors need torch and NIXL; this one does not import them,
    # so it only asks whether they are there (ImportError: the CLI names the extra).
    if importlib.util.find_spec("torch") is None:
        raise ImportError("torch is not installed", name="torch")
    if all(importlib.util.find_spec(name) is None for name in ("nixl", "nixl_cu12")):
        raise ImportError("NIXL is not installed", name="nixl-cu12")


def add_arguments(parser: argparse.ArgumentParser, registry: Registry) -> None:
    # Neither module imports torch or NIXL: parsing a refitwire command never does.
    from refitwire.refit import CLI_INJECTIONS, MODELS, PROGRESS_MODES

    _require_extra()

    parser.add_argument("--publishers", type=int, default=2, metavar="N", help="trainer ranks (default 2)")
    parser.add_argument("--receivers", type=int, default=2, metavar="M", help="inference ranks (default 2)")
    parser.add_argument("--steps", type=int, default=3, metavar="S", help="refit steps (default 3)")
    parser.add_argument("--inject", choices=CLI_INJECTIONS, default=None,
                        help="misbehave once, at --inject-step on the last publisher")  # fmt: skip
    parser.add_argument("--inject-step", type=int, default=None, metavar="S", help="default: step 2")
    parser.add_argument("--model", choices=list(MODELS), default="default",
                        help="synthetic model size (default: %(default)s; 1gib moves just over 1 GiB)")  # fmt: skip
    parser.add_argument("--model-bytes", type=_byte_count, default=None, metavar="N",
                        help="the smallest model (or --layout, scaled) of at least N bytes (1GiB, 512MiB, 2GB)")  # fmt: skip
    parser.add_argument("--layout", default=None, metavar="FILE|dense-8b|moe-30b-a3b",
                        help="a real model's tensors: a .safetensors header, a JSON list or a preset")  # fmt: skip
    parser.add_argument("--device", default="cpu", metavar="cpu|cuda|cuda:N",
                        help="where every process keeps its bytes: cpu (DRAM, default) or cuda (VRAM)")  # fmt: skip
    parser.add_argument("--accept-unchecked", action="store_true", help="install shards without a digest")
    parser.add_argument("--store", type=_store_spec, default=None, metavar="DIR|redis://HOST:PORT/DB",
                        help="rendezvous directory or Redis URL (default: a temp dir); see docs/refit.md")  # fmt: skip
    parser.add_argument("--discover-timeout", type=float, default=30.0, metavar="SECONDS")
    parser.add_argument("--read-timeout", type=float, default=30.0, metavar="SECONDS")
    parser.add_argument("--upstream-python", default=None, metavar="PYTHON",
                        help="publishers write blobs with the released modelexpress")  # fmt: skip
    parser.add_argument("--netns", nargs=2, default=None, metavar=("PUB_NS", "RECV_NS"),
                        help="publishers in PUB_NS, receivers in RECV_NS (ip netns), UCX over TCP")  # fmt: skip
    parser.add_argument("--publisher-progress", choices=PROGRESS_MODES, default="poll",
                        help="NIXL progress on publishers: a sleeping thread (default), a spinning one, none")  # fmt: skip
    parser.add_argument("--receiver-progress", choices=PROGRESS_MODES, default="off",
                        help="NIXL progress on receivers (default off: they poll their own reads)")  # fmt: skip
    parser.add_argument("--raw-reps", type=int, default=2, metavar="K",
                        help="plain NIXL READs of the same bytes after each step, the anchor (0: none)")  # fmt: skip
    parser.add_argument(
        "--json", type=Path, default=None, metavar="FILE", help="also write the report as JSON"
    )


def _byte_count(text: str) -> int:
    from refitwire.refit import parse_bytes

    try:
        return parse_bytes(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _store_spec(spec: str) -> str:
    from refitwire.refit import check_spec

    try:
        check_spec(spec)
    except ValueError as exc:  # the message never shows a password
        raise argparse.ArgumentTypeError(str(exc)) from None
    return spec


def run(args: argparse.Namespace) -> int:
    try:
        from refitwire.compat.upstream import UPSTREAM_OBJECTS
        from refitwire.refit import RunConfig, UpstreamWriter, render_table
        from refitwire.refit import run as run_refit

        upstream = (
            UpstreamWriter(args.upstream_python, str(UPSTREAM_OBJECTS)) if args.upstream_python else None
        )

        config = RunConfig(
            publishers=args.publishers,
            receivers=args.receivers,
            steps=args.steps,
            inject=args.inject,
            inject_step=args.inject_step,
            model=args.model if args.model_bytes is None else f"{args.model_bytes}B",
            layout=args.layout,
            device=args.device,
            accept_unchecked=args.accept_unchecked,
            discover_timeout_s=args.discover_timeout,
            read_timeout_s=args.read_timeout,
            store=args.store,
            upstream=upstream,
            netns=(args.netns[0], args.netns[1]) if args.netns else None,
            publisher_progress=args.publisher_progress,
            receiver_progress=args.receiver_progress,
            raw_reps=args.raw_reps,
        )
    except ImportError as exc:
        return fail(f"refit needs the refit extra (torch, nixl-cu12): {exc}")
    except ValueError as exc:
        return fail(str(exc))
    try:
        report = run_refit(config, err=sys.stderr).to_json()
    except ValueError as exc:  # a device this machine cannot use
        return fail(str(exc))
    print(render_table(report))
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0 if report["ok"] else 1
