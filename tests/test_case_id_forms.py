"""Case IDs name what a case tests: unique, the same for the same seed, and never the payload's
hash; lists keyed by IDs of the old form are carried over (tools/carry_case_ids.py).

The contributor's route (a member added, no ID changed) is tests/gate/test_case_ids.py."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

from refitwire import wire
from refitwire.compat.cases import _built_cases, _cases
from refitwire.compat.runner import _expected

TOOLS = Path(__file__).resolve().parents[1] / "tools"
sys.path.insert(0, str(TOOLS))
import carry_case_ids  # noqa: E402


def test_refusal_ids_are_unique_per_version_and_name_the_break_not_the_payload() -> None:
    registry = wire.default_registry()
    for version in registry.released_versions():
        cases = _built_cases.refusal_cases(version, registry)
        ids = [c.id for c in cases]
        assert len(set(ids)) == len(ids), version
        assert all(c.id.startswith(f"refuse:{c.rule}-") for c in cases)
        case = cases[0]
        # the same break in a payload that carries one more member keeps its ID
        grown = copy.deepcopy(case.payload)
        grown["some_later_member"] = 1
        assert _cases.content_id(f"refuse:{case.rule}", grown) != _cases.content_id(
            f"refuse:{case.rule}", case.payload
        )
        assert case.id == f"refuse:{_cases.name_id(case.rule, case.rule, case.description)}"


def test_generated_ids_are_the_seeds_draws_and_the_string_classes() -> None:
    registry = wire.default_registry()
    first = _cases.generated_payloads(3, 12, registry)
    assert first == _cases.generated_payloads(3, 12, registry)  # stable for the same seed
    drawn = [i for i in first if i.removeprefix("gen-").isdigit()]
    assert drawn == [f"gen-{n}" for n in range(len(drawn))]
    assert {f"gen-{name}" for name in _cases.STRING_CLASSES} <= set(first)
    payloads = list(first.values())
    assert all(payloads.count(p) == 1 for p in payloads[: len(drawn)])


def test_a_list_of_old_ids_is_carried_over_and_a_stale_one_is_named() -> None:
    registry = wire.default_registry()
    alias = carry_case_ids.aliases([], registry, built=True)
    vector = carry_case_ids.vectors()[0]
    refusal = _built_cases.refusal_cases("1.2.0", registry)[0]
    old_refusal = _cases.content_id(f"refuse:{refusal.rule}", refusal.payload)
    listed = {
        "implementation": "x",
        "expected_failures": [
            {
                "case": f"read:{vector['content']}#rule",
                "role": "reader",
                "reason": "r",
                "spec_versions": ["1.0.0"],
            },
            {"case": f"{old_refusal}#rule", "role": "writer", "reason": "r", "spec_versions": ["1.2.0"]},
            {"case": f"{refusal.id}#rule", "role": "writer", "reason": "r", "spec_versions": ["1.1.0"]},
        ],
    }
    carried = carry_case_ids.carry_list(listed, alias)["expected_failures"]
    assert [e["case"] for e in carried] == [f"read:{vector['id']}#rule", f"{refusal.id}#rule"]
    assert carried[1]["spec_versions"] == ["1.1.0", "1.2.0"]  # one case, its versions joined
    assert carry_case_ids.carried(f"see read:{vector['content']}.", alias) == f"see read:{vector['id']}."

    texts = carry_case_ids.rewrites(alias)
    path = carry_case_ids.LISTS[0]
    data = json.loads(texts[path])
    data["expected_failures"].append({**data["expected_failures"][0], "case": "read:v-000000000000"})
    texts[path] = json.dumps(data)
    found = carry_case_ids.stale_entries(registry, texts)
    assert [line for line in found if "v-000000000000" in line] == [
        f"{path.relative_to(carry_case_ids.ROOT)}: read:v-000000000000 ({data['expected_failures'][0]['role']})"
    ]
    assert len(found) == 1  # and the lists as committed hold no stale entry
    assert _expected.stale([("x", "reader", f"read:{vector['id']}")], _expected.known_cases(registry)) == []
