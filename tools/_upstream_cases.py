"""Run the kit's own checks on the released upstream participants alone: python tools/_upstream_cases.py FOLDER.

Started by ``_vector_upstream.measure`` as a fresh process, so the golden vectors it reads are
the ones the build just wrote (a process that built them may hold the earlier ones). Writes
JSON-lines reports of matrices whose participants are the released modelexpress readers and
writers only, exactly as ``refitwire matrix`` judges them: ``matrix.jsonl`` with every golden
read, write (with its variants) and writer refusal case, the digest cases and the protocol
probes, each with its derived results (``#rule``, ``:bytes``); then one ``size-N.jsonl`` for
each Recommended size case (``--case``). Only those: a Required case is never an expected
failure, and the Required size cases read 64 MiB tables, half a minute per release, to find
nothing the list could hold.
"""

from __future__ import annotations

import sys
from pathlib import Path

import _clone
from refitwire import compat
from refitwire.compat._results import RECOMMENDED
from refitwire.compat.cases import _sizes
from refitwire.wire import blob_limit


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        raise SystemExit("usage: python tools/_upstream_cases.py FOLDER")
    found, missing = compat.upstream()
    if not found or missing:
        raise SystemExit(
            f"the released upstream participants are needed: {'; '.join(missing) or 'none found'}"
        )
    # One generated payload: the cross cases between the releases are not what is measured here.
    plans = {
        "matrix": compat.Plan(
            registry=_clone.registry(),
            participants=found,
            seed=0,
            examples=1,
            upstream="ran",
            limits=False,
        )
    }
    recommended = [
        case.id for case in _sizes.size_cases(blob_limit(_clone.registry())) if case.tier == RECOMMENDED
    ]
    for n, case in enumerate(recommended):
        plans[f"size-{n}"] = compat.Plan(
            registry=_clone.registry(), participants=found, examples=0, upstream="ran", only=case
        )
    for name, plan in plans.items():
        with (Path(argv[0]) / f"{name}.jsonl").open("w", encoding="utf-8") as stream:
            compat.run_matrix(plan, stream)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
