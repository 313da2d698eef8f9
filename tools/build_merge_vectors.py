"""Build schema/vectors/merge/merge.json: how a receiver merges the shard tables of several
publishers (SPEC.md section 2.6), with what the released upstream ``merge_shard_tables`` does.

Run: python tools/build_merge_vectors.py [--check]

The cases come from the two rules, read from SPEC.md and the newest wire model, not listed:

* ``MERGE_REPLICAS``: the shard members its terms name are the box; every other shard member
  is changed in the replica (to another value the schema allows), so which replica was kept
  shows in each of them. Replicas across tables and within one table, a replica in a later
  table after one without the tensor, distinct and overlapping boxes (all kept), and the same
  box under another tensor name (no replica).
* ``MERGE_CONSISTENT``: the tensor members its terms name, the first being the key (``name``);
  each of the others changed in a second table is a disagreement to refuse, and a dtype label
  written without ``torch.`` in one table and with it in the other is no disagreement
  (``DTYPE_LABEL``: the two name the same type).

Every table is a valid one (the reference writer writes it); the expected merge is worked out
here from the rule's words: the first shard of each box in table order, then shard order. The
released upstream readers are asked each case through the adapter's ``merge`` command
(``upstream``: ``agrees`` when every release gives that answer); that sets the tier (SPEC.md
section 7). ``--check`` rebuilds in memory, keeps the recorded ``upstream`` verdicts, and fails
when the file differs or a case was never measured.
"""

from __future__ import annotations

import argparse
import copy
import itertools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import _clone
from refitwire import InvalidBlob, from_decoded, wrap_rendezvous_blob
from refitwire.compat.cases._built_cases import base_payload
from refitwire.compat.cases._cases import member_values, name_id
from refitwire.compat.cases._merge import merge_terms, same_merge
from refitwire.compat.upstream import ADAPTER_SCRIPT, envs
from refitwire.wire import decoded_members, dtype_sizes, version_key

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "schema" / "vectors" / "merge" / "merge.json"
MODEL = _clone.registry().newest_model()
TENSOR, SHARD = MODEL.table_at(), MODEL.table_at(*MODEL.table_at())


#: as the newest release states them: its merges are what the released merge_shard_tables is
#: measured on, and a rule a candidate states anew (a row stamped with its version) leaves them
KEY, AGREED, BOX = merge_terms(
    _clone.registry().wire_model("rendezvous", _clone.registry().released_versions()[-1]), _clone.registry()
)


def _base() -> dict[str, Any]:
    """A decoded tensor of the golden writer vectors with two shards, every member the model
    declares given a value (a replica then differs from its first in each)."""
    vectors = json.loads((ROOT / "schema" / "vectors" / "writer-output.json").read_text())["vectors"]
    for v in vectors:
        # as the newest version that reads it decodes it (a member required later makes the
        # blob, written without it, invalid at that version)
        reading = [version for version, expect in v["expect"].items() if expect["valid"]]
        if not reading:
            continue
        decoded = v["expect"][max(reading, key=version_key)]["decoded"]
        for t in decoded[TENSOR[-1]]:
            if len(t[SHARD[-1]]) >= 2:
                table = [t]
                places = [(TENSOR, (0,))] + [(SHARD, (0, j)) for j in range(len(t[SHARD[-1]]))]
                for level, where in places:
                    for member in decoded_members(MODEL.level(*level)):
                        if _at(table, where).get(member.name) is None:  # (one that may only be null stays)
                            table = _other(table, where, member.name) or table
                return table[0]
    raise SystemExit("build_merge_vectors: no golden tensor with two shards")


def _valid(table: list[dict[str, Any]]) -> bool:
    try:
        p = from_decoded({**base_payload(MODEL.version, _clone.registry()), TENSOR[-1]: table})
        wrap_rendezvous_blob(*p[:4], p.publisher_step, **p.optional_members)
    except InvalidBlob:
        return False
    return True


def _changed(table: list[dict[str, Any]], where: tuple[int, ...], name: str) -> list[dict[str, Any]]:
    """``table`` with member ``name`` of the object at ``where`` (a tensor, or a tensor's shard)
    changed to another value its schema allows, the table staying valid."""
    found = _other(table, where, name)
    if found is None:
        raise SystemExit(f"build_merge_vectors: no other valid value for {name} of {where}")
    return found


def _other(table: list[dict[str, Any]], where: tuple[int, ...], name: str) -> list[dict[str, Any]] | None:
    level = TENSOR if len(where) == 1 else SHARD
    value = _at(table, where).get(name)
    candidates: list[Any] = []
    if type(value) is int:
        candidates += [value + 1, value - 1]
    if isinstance(value, list) and value and all(type(v) is int for v in value):
        candidates.append([value[0] + 1, *value[1:]])
    if isinstance(value, str):
        candidates.append(value + "x")
    candidates += member_values(json.dumps(dict(MODEL.level(*level)[name].schema), sort_keys=True))
    for candidate in candidates:
        if candidate == value:
            continue
        out = copy.deepcopy(table)
        _at(out, where)[name] = candidate
        if _valid(out):
            return out
    return None


def _whole_box(table: list[dict[str, Any]], name: str, value: Any) -> list[dict[str, Any]]:
    """``table`` with tensor member ``name`` set to ``value`` and, where the shards no longer fit
    (a ``full_shape`` of another rank or order), one shard whose box is the whole tensor."""
    changed = [{**table[0], name: value}]
    if not _valid(changed):
        offset, extent = BOX
        whole = {**table[0][SHARD[-1]][0], offset: [0] * len(value), extent: list(value)}
        changed = [{**changed[0], SHARD[-1]: [whole]}]
    assert _valid(changed), (name, value)
    return changed


def _at(table: list[dict[str, Any]], where: tuple[int, ...]) -> dict[str, Any]:
    tensor = table[where[0]]
    return tensor if len(where) == 1 else tensor[SHARD[-1]][where[1]]


def _replica(table: list[dict[str, Any]], where: tuple[int, int]) -> list[dict[str, Any]]:
    for member in decoded_members(MODEL.level(*SHARD)):
        if member.name not in BOX:  # (one with a single value, a constant say, cannot differ)
            table = _other(table, where, member.name) or table
    return table


def _merged(tables: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """SPEC.md 2.6 read literally: by ``KEY``, the first shard of each box, table then shard order."""
    out: dict[Any, dict[str, Any]] = {}
    for table in tables:
        for tensor in table:
            kept = out.setdefault(tensor[KEY], {**tensor, SHARD[-1]: []})
            boxes = [[s[b] for b in BOX] for s in kept[SHARD[-1]]]
            for shard in tensor[SHARD[-1]]:
                if [shard[b] for b in BOX] not in boxes:
                    kept[SHARD[-1]].append(shard)
                    boxes.append([shard[b] for b in BOX])
    return list(out.values())


def inputs() -> list[dict[str, Any]]:
    base = [_base()]
    two = base[0][SHARD[-1]]
    other = _changed(base, (0,), KEY)
    cases: list[tuple[str, str, list[list[dict[str, Any]]]]] = [
        ("MERGE_REPLICAS", "replicas in two tables: the first table's shard is kept", [base, _replica(base, (0, 0))]),
        ("MERGE_REPLICAS", "a replica in one table: the first in shard order is kept",
         [[{**base[0], SHARD[-1]: [two[0], _replica(base, (0, 0))[0][SHARD[-1]][0], two[1]]}]]),
        ("MERGE_REPLICAS", "a replica in the third table, after a table without the tensor",
         [[{**base[0], SHARD[-1]: two[:1]}], other, _replica(base, (0, 0))]),
        ("MERGE_REPLICAS", "distinct boxes of one tensor from two tables are all kept",
         [[{**base[0], SHARD[-1]: two[:1]}], [{**base[0], SHARD[-1]: two[1:]}]]),
        ("MERGE_REPLICAS", "the same box under another tensor name is no replica", [base, other]),
    ]  # fmt: skip
    for name in BOX:  # a box that overlaps another but is not the same is kept
        moved = _changed([{**base[0], SHARD[-1]: two[:1]}], (0, 0), name)
        cases.append(("MERGE_REPLICAS", f"a box that differs in {name} alone is kept", [base, moved]))
    # A member the others constrain (elsize by a dtype this spec lists) is changed on a tensor whose
    # dtype label it does not list, where elsize is authoritative (ELSIZE_DTYPE).
    unlisted = _changed(base, (0,), "dtype")
    for name in AGREED:
        first = base if _other(base, (0,), name) is not None else unlisted
        cases.append(
            ("MERGE_CONSISTENT", f"two tables disagree on {name}", [first, _changed(first, (0,), name)])
        )
    for name in AGREED:  # an array disagreeing in order or length, not only in one item's value
        value = base[0][name]
        if isinstance(value, list) and len({json.dumps(item) for item in value}) > 1:
            for what, changed in (
                ("the same items in another order", value[::-1]),
                ("one more item", [*value, 1]),
            ):
                cases.append(("MERGE_CONSISTENT", f"two tables disagree on {name}: {what}",
                              [base, _whole_box(base, name, changed)]))  # fmt: skip
    # Two labels SPEC.md's table gives one size still disagree (labels are compared, not sizes):
    # each label beside the next of its size, in the table's order (which lists half by float16).
    by_size: dict[int, list[str]] = {}
    for dtype, size in dtype_sizes(_clone.registry()).items():
        by_size.setdefault(size, []).append(dtype)
    for size, labels in by_size.items():
        for a, b in itertools.pairwise(labels):
            pair = [[{**base[0], "dtype": dtype, "elsize": size}] for dtype in (a, b)]
            cases.append(
                (
                    "MERGE_CONSISTENT",
                    f"two tables disagree on dtype: {a} and {b}, {size} byte{'s' * (size > 1)} each",
                    pair,
                )
            )
    label = base[0]["dtype"]
    respelled = label.removeprefix("torch.") if label.startswith("torch.") else f"torch.{label}"
    cases.append(("MERGE_CONSISTENT", f"{label} and {respelled} agree: the same dtype",
                  [base, [{**base[0], "dtype": respelled}]]))  # fmt: skip
    found = []
    for rule, description, tables in cases:
        assert all(_valid(t) for t in tables), description
        agree = rule == "MERGE_REPLICAS" or "agree:" in description
        found.append({  # named by its description, not its tables (they gain later members)
            "id": name_id("m", description), "description": description, "rule": rule,
            "tables": tables, "expect": {"merged": _merged(tables)} if agree else {"refuse": rule},
        })  # fmt: skip
    return found


def upstream_verdicts(cases: list[dict[str, Any]]) -> dict[str, str]:
    """``agrees`` or ``differs`` per case, as every released ``merge_shard_tables`` answers."""
    verdicts = dict.fromkeys((c["id"] for c in cases), "agrees")
    for version in envs.UPSTREAM_VERSIONS:
        python = envs.find_env(version)
        if python is None:
            raise SystemExit(f"build_merge_vectors: no environment for modelexpress {version}: build it with "
                             "`python -m refitwire.compat.upstream.envs`")  # fmt: skip
        requests = [{"cmd": "start", "protocol": 1}]
        requests += [{"cmd": "merge", "seq": n, "tables": c["tables"]} for n, c in enumerate(cases, 1)]
        text = "".join(json.dumps(r) + "\n" for r in requests + [{"cmd": "stop"}])
        proc = subprocess.run([str(python), str(ADAPTER_SCRIPT)], input=text.encode(), capture_output=True,
                              timeout=600, check=False)  # fmt: skip
        answers = [json.loads(line) for line in proc.stdout.decode().splitlines()][1:]
        if proc.returncode != 0 or len(answers) != len(cases):
            raise SystemExit(f"build_merge_vectors: the adapter failed: {proc.stderr.decode()[-2000:]}")
        for case, answer in zip(cases, answers):
            if "refuse" in case["expect"]:
                right = answer.get("rejected") is True
            else:
                right = "merged" in answer and same_merge(
                    case["expect"]["merged"], answer["merged"], KEY, BOX
                )
            if not right:
                verdicts[case["id"]] = "differs"
    return verdicts


def document(verdicts: dict[str, str]) -> str:
    cases = inputs()
    missing = [c["id"] for c in cases if c["id"] not in verdicts]
    if missing:
        raise SystemExit(f"build_merge_vectors: never measured: {', '.join(missing)} (run without --check)")
    for case in cases:
        case["upstream"] = verdicts[case["id"]]
        case["tier"] = "required" if case["upstream"] == "agrees" else "recommended"
    doc = {
        "description": (
            "Shard tables merged as a receiver merges them (SPEC.md section 2.6): each table is a decoded "
            "form's tensors; expect is the merged table (its tensors by name, their shards by box, any "
            "order) or the rule a receiver refuses the tables by. upstream: whether every released "
            "merge_shard_tables gives that answer. Written by tools/build_merge_vectors.py."
        ),
        "vectors": cases,
    }
    return json.dumps(doc, indent=1) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail when the committed file differs")
    args = parser.parse_args()
    if args.check:
        recorded = (
            {v["id"]: v["upstream"] for v in json.loads(OUT.read_text())["vectors"]} if OUT.exists() else {}
        )
        if not OUT.exists() or OUT.read_text(encoding="utf-8") != document(recorded):
            print(f"{OUT.name} is out of date: run python tools/build_merge_vectors.py", file=sys.stderr)
            return 1
        return 0
    text = document(upstream_verdicts(inputs()))
    _clone.writable()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT} ({len(json.loads(text)['vectors'])} vectors)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
