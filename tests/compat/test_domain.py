"""The keyword generators (``compat.keywords``): valid values that span a member's domain, and
values that break exactly one keyword each, for shapes the released schemas do not use.

Each break is checked here with python-jsonschema, a validator other than the one the
generator filters with (jsonschema-rs), so a generator that breaks the wrong keyword, or two,
or none, fails."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import jsonschema
import jsonschema.validators
import pytest
from refitwire import wire
from refitwire.compat.keywords import UnhandledKeyword, breaks, domain, unbreakable

#: The members of issue 25 and more: every keyword the generators know, nested.
SHAPES: dict[str, dict[str, Any]] = {
    "enum": {"type": "string", "enum": ["row_major", "col_major"]},
    "object": {"type": "object", "properties": {"rank": {"type": "integer", "minimum": 0, "maximum": 1023},
               "world_size": {"type": "integer", "minimum": 1, "maximum": 1024}, "note": {"type": "string"}},
               "required": ["rank", "world_size"], "additionalProperties": False},
    "bounded-items": {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 255}, "maxItems": 4},
    "pattern-length": {"type": "string", "pattern": "^[a-z][a-z0-9-]*$", "maxLength": 64},
    "nullable-exclusive": {"type": ["number", "null"], "exclusiveMinimum": 0, "exclusiveMaximum": 1},
    "prefix-const": {"type": "array", "prefixItems": [{"const": "v"}, {"type": "integer", "minimum": 0}],
                     "items": False, "minItems": 2},
    "unique-min": {"type": "array", "items": {"type": "string", "minLength": 2}, "minItems": 1, "uniqueItems": True},
    "objects-deep": {"type": "array", "maxItems": 3, "items": {"type": "object", "required": ["id"], "properties": {
        "id": {"type": "integer", "multipleOf": 4, "minimum": 0}, "tags": {"type": "object",
        "additionalProperties": {"type": "boolean"}, "maxProperties": 2}}}},
    # the keywords that apply subschemas (compat.keywords._composed), and annotations that assert nothing
    "any-of": {"anyOf": [{"type": "integer", "minimum": 0, "maximum": 7}, {"type": "string", "enum": ["auto"]}]},
    "one-of-overlapping": {"oneOf": [{"type": "integer", "minimum": 0}, {"type": "integer", "maximum": 10}]},
    "all-of": {"allOf": [{"type": "integer", "minimum": 3}, {"maximum": 5}]},
    "not": {"type": "integer", "minimum": 0, "maximum": 15, "not": {"const": 13}},
    "map": {"type": "object", "patternProperties": {"^[a-z]+$": {"type": "string", "maxLength": 8}},
            "additionalProperties": False},
    "names": {"type": "object", "propertyNames": {"maxLength": 4}, "additionalProperties": {"type": "integer"}},
    # an unknown name matching no patternProperties; padding names propertyNames allows
    "pattern-map-closed": {"type": "object", "patternProperties": {"^x_": {"type": "integer"}},
                           "additionalProperties": False},
    "named-count": {"type": "object", "propertyNames": {"enum": ["p", "q", "r"]}, "minProperties": 2},
    "all-of-objects": {"allOf": [{"type": "object", "required": ["a"]}, {"type": "object", "required": ["b"]}]},
    "patterned-count": {"type": "object", "propertyNames": {"pattern": "^[a-z]+$"}, "maxProperties": 2},
    "dependent": {"type": "object", "properties": {"team": {"type": "string"}, "contact": {"type": "string"}},
                  "dependentRequired": {"team": ["contact"]}},
    "contains": {"type": "array", "items": {"type": "integer", "minimum": 0}, "contains": {"const": 0},
                 "minContains": 2, "maxContains": 3, "maxItems": 4},
    "format": {"type": "string", "format": "hostname", "maxLength": 8, "contentEncoding": "base64"},
    # the conditional keywords (compat.keywords._conditional) and unevaluatedProperties
    "if-then-else": {"type": "integer", "minimum": 0, "maximum": 100, "if": {"minimum": 10}, "then": {"multipleOf": 2},
                     "else": {"minimum": 4, "maximum": 7}},
    "if-then": {"type": "string", "maxLength": 8, "if": {"maxLength": 2}, "then": {"pattern": "^a"}},
    "if-else-overlapping": {"type": "integer", "minimum": 0, "if": {"maximum": 100}, "else": {"maximum": 3}},
    "if-object": {"type": "object", "properties": {"kind": {"enum": ["tcp", "unix"]}, "port": {"type": "integer",
                  "minimum": 1, "maximum": 65535}, "path": {"type": "string", "maxLength": 16}}, "required": ["kind"],
                  "if": {"properties": {"kind": {"const": "tcp"}}}, "then": {"required": ["port"]},
                  "else": {"required": ["path"]}},
    "dependent-schemas": {"type": "object", "properties": {"port": {"type": "integer", "minimum": 1},
                          "host": {"type": "string", "maxLength": 8}},
                          "dependentSchemas": {"port": {"required": ["host"], "properties": {"port": {"maximum": 65535}}}}},
    "dependent-undeclared": {"type": "object", "properties": {"y": {"type": "string"}},
                             "dependentSchemas": {"x": {"required": ["y"]}}},
    "dependent-narrowing": {"type": "object", "properties": {"bits": {"enum": [4, 8]}, "scale": {"type": "string"}},
                            "dependentSchemas": {"scale": {"properties": {"bits": {"const": 8}}}}},
    "then-false-member": {"type": "object", "properties": {"kind": {"enum": ["a", "b"]}, "n": {"type": "integer"}},
                          "if": {"properties": {"kind": {"const": "a"}}}, "then": {"properties": {"n": False}}},
    "dependent-in-items": {"type": "array", "maxItems": 2, "items": {"type": "object", "properties": {"a": {"type": "boolean"}},
                           "dependentSchemas": {"a": {"properties": {"b": {"type": "integer", "maximum": 9}}}}}},
    "unevaluated-false": {"type": "object", "properties": {"a": {"type": "integer"}}, "if": {"required": ["a"]},
                          "then": {"properties": {"b": {"type": "string"}}}, "unevaluatedProperties": False},
    "unevaluated-schema": {"type": "object", "properties": {"a": {"type": "integer"}},
                           "allOf": [{"properties": {"b": {"type": "string"}}}],
                           "unevaluatedProperties": {"type": "boolean"}},
}  # fmt: skip

#: Every keyword each shape must see broken (the keyword and where inside the value).
BROKEN: dict[str, set[tuple[str, tuple[Any, ...]]]] = {
    "enum": {("enum", ()), ("type", ())},
    "object": {("required", ()), ("additionalProperties", ()), ("minimum", ("rank",)), ("maximum", ("rank",)),
               ("minimum", ("world_size",)), ("maximum", ("world_size",)), ("type", ("note",)), ("type", ())},
    "bounded-items": {("maxItems", ()), ("minimum", (0,)), ("maximum", (0,)), ("type", (0,)), ("type", ())},
    "pattern-length": {("pattern", ()), ("maxLength", ()), ("type", ())},
    "nullable-exclusive": {("exclusiveMinimum", ()), ("exclusiveMaximum", ()), ("type", ())},
    "prefix-const": {("minItems", ()), ("const", (0,)), ("minimum", (1,)), ("type", (1,))},
    "unique-min": {("uniqueItems", ()), ("minItems", ()), ("minLength", (0,))},
    "objects-deep": {("maxItems", ()), ("required", (0,)), ("multipleOf", (0, "id")), ("minimum", (0, "id")),
                     ("type", (0, "tags", "x_unknown")), ("maxProperties", (0, "tags"))},
    "any-of": {("anyOf", ())},
    "one-of-overlapping": {("oneOf", ())},
    "all-of": {("minimum", ()), ("maximum", ()), ("type", ())},
    "not": {("not", ()), ("minimum", ()), ("maximum", ()), ("type", ())},
    "map": {("maxLength", ("a",)), ("type", ("a",)), ("additionalProperties", ()), ("type", ())},
    "names": {("maxLength", ()), ("type", ("aa",)), ("type", ())},  # (an unknown name propertyNames allows)
    "pattern-map-closed": {("additionalProperties", ()), ("type", ("x_",)), ("type", ())},
    "named-count": {("minProperties", ()), ("enum", ()), ("type", ())},
    "all-of-objects": {("required", ()), ("type", ())},  # (a value only the merged branches allow)
    "patterned-count": {("maxProperties", ()), ("pattern", ()), ("type", ())},
    "dependent": {("dependentRequired", ()), ("type", ("team",)), ("type", ("contact",)), ("type", ())},
    "contains": {("minContains", ()), ("maxContains", ()), ("minimum", (3,)), ("type", (3,)), ("maxItems", ())},
    "format": {("maxLength", ()), ("type", ())},
    "if-then-else": {("multipleOf", ()), ("maximum", ()), ("minimum", ()), ("type", ())},
    "if-then": {("pattern", ()), ("maxLength", ()), ("type", ())},
    "if-else-overlapping": {("maximum", ()), ("minimum", ()), ("type", ())},
    "if-object": {("required", ()), ("enum", ("kind",)), ("maximum", ("port",)), ("maxLength", ("path",))},
    "dependent-schemas": {("required", ()), ("maximum", ("port",)), ("minimum", ("port",)), ("type", ("host",))},
    "dependent-undeclared": {("required", ()), ("type", ("y",))},  # (the trigger x added to the object)
    "dependent-narrowing": {("const", ("bits",)), ("type", ())},
    "then-false-member": {("enum", ("kind",)), ("type", ("n",))},  # (no keyword of a false schema to break)
    "dependent-in-items": {("maximum", (0, "b")), ("type", (0, "b")), ("type", (0, "a")), ("maxItems", ())},
    "unevaluated-false": {("unevaluatedProperties", ()), ("type", ("a",)), ("type", ())},
    "unevaluated-schema": {("unevaluatedProperties", ()), ("type", ("a",)), ("type", ("b",))},
}  # fmt: skip

#: For the conditional shapes: the schema paths (python-jsonschema's) their breaks must reach, so
#: a break of ``then`` is one its ``if`` allows, one of ``else`` one it does not.
THROUGH: dict[str, set[tuple[Any, ...]]] = {
    "if-then-else": {("then", "multipleOf"), ("else", "minimum"), ("else", "maximum")},
    "if-then": {("then", "pattern"), ("maxLength",)},
    "if-else-overlapping": {("else", "maximum")},
    "if-object": {("then", "required"), ("else", "required"), ("required",)},
    "dependent-schemas": {("dependentSchemas", "port", "required"),
                          ("dependentSchemas", "port", "properties", "port", "maximum")},
    "dependent-undeclared": {("dependentSchemas", "x", "required")},
    "dependent-narrowing": {("dependentSchemas", "scale", "properties", "bits", "const")},
    "dependent-in-items": {("items", "dependentSchemas", "a", "properties", "b", "maximum")},
}  # fmt: skip


def _ecma_pattern(
    validator: Any, pattern: str, instance: Any, schema: Any
) -> Iterator[jsonschema.ValidationError]:
    """``pattern`` as ECMA-262 reads it (the spec's): ``$`` matches only at the very end."""
    if isinstance(instance, str) and not re.search(pattern.replace("$", r"\Z"), instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


ECMA = jsonschema.validators.extend(jsonschema.Draft202012Validator, {"pattern": _ecma_pattern})


@pytest.mark.parametrize("name", SHAPES)
def test_every_value_is_valid_and_every_break_breaks_exactly_its_keyword(name: str) -> None:
    schema = SHAPES[name]
    check = ECMA(schema)
    values = domain(schema)
    assert values and all(check.is_valid(v) for v in values), values
    found, through = set(), set()
    for broken in breaks(schema):
        errors = {(e.validator, tuple(e.absolute_path)) for e in check.iter_errors(broken.value)}
        if broken.keyword == "items" and schema.get("items") is False:
            # python-jsonschema places an item ``items: false`` refuses at the array; jsonschema-rs,
            # which the kit follows, at the item
            errors = {(k, broken.at if k == "items" else at) for k, at in errors}
        wanted = (broken.keyword, broken.at)
        assert wanted in errors, (broken, errors)
        if broken.keyword != "type":  # a wrong type may also miss an enum: TYPE is reported
            assert errors == {wanted}, (broken, errors)
        found.add(wanted)
        through |= {tuple(e.schema_path) for e in check.iter_errors(broken.value)}
    assert BROKEN[name] <= found, BROKEN[name] - found
    assert THROUGH.get(name, set()) <= through, THROUGH[name] - through
    assert unbreakable(schema) == ()


def test_the_valid_values_span_the_domain() -> None:
    assert set(domain(SHAPES["enum"])) == {"row_major", "col_major"}
    objects = domain(SHAPES["object"])
    assert {o["rank"] for o in objects} >= {0, 1023} and {o["world_size"] for o in objects} >= {1, 1024}
    assert any("note" in o for o in objects) and any(
        "note" not in o for o in objects
    )  # optional present, absent
    arrays = domain(SHAPES["bounded-items"])
    assert [] in arrays and any(len(a) == 4 for a in arrays) and {0, 255} <= {i for a in arrays for i in a}
    strings = domain(SHAPES["pattern-length"])
    assert min(map(len, strings)) == 1 and max(map(len, strings)) == 64
    numbers = domain(SHAPES["nullable-exclusive"])
    assert None in numbers and all(0 < n < 1 for n in numbers if n is not None) and len(numbers) >= 4
    assert {a[1] for a in domain(SHAPES["prefix-const"])} >= {0}


def test_the_valid_values_take_each_side_of_a_condition() -> None:
    numbers = domain(SHAPES["if-then-else"])
    assert any(4 <= n <= 7 for n in numbers) and any(n >= 10 for n in numbers)  # else's side and then's
    assert any(len(s) > 2 and not s.startswith("a") for s in domain(SHAPES["if-then"]))  # no else: free
    assert {o["kind"] for o in domain(SHAPES["if-object"])} == {"tcp", "unix"}
    objects = domain(SHAPES["dependent-schemas"])
    assert any("port" in o for o in objects) and any("port" not in o for o in objects)
    assert any("b" in o and "a" in o for o in domain(SHAPES["unevaluated-false"]))  # evaluated by then
    assert any(isinstance(o.get("x_unknown"), bool) for o in domain(SHAPES["unevaluated-schema"]))
    assert any("x" in o for o in domain(SHAPES["dependent-undeclared"]))
    members = domain(SHAPES["then-false-member"])
    assert any(o.get("kind") == "a" for o in members) and any("n" in o for o in members)


@pytest.mark.parametrize(
    ("schema", "keyword", "where"),
    [
        ({"type": "array", "items": {"unevaluatedItems": False}}, "unevaluatedItems", "/items"),
        (
            {
                "type": "object",
                "properties": {"a": {"if": {"$dynamicRef": "#x"}, "then": {"type": "string"}}},
            },
            "$dynamicRef",
            "/properties/a/if",
        ),
        (
            {"type": "object", "dependentSchemas": {"a": {"else": {"unevaluatedItems": False}}}},
            "unevaluatedItems",
            "/dependentSchemas/a/else",
        ),
        (
            {"type": "object", "unevaluatedProperties": {"type": "array", "unevaluatedItems": False}},
            "unevaluatedItems",
            "/unevaluatedProperties",
        ),
    ],
)
def test_a_keyword_no_generator_handles_fails_naming_it(
    schema: dict[str, Any], keyword: str, where: str
) -> None:
    for generate in (domain, breaks):
        with pytest.raises(UnhandledKeyword) as raised:
            generate(schema)
        assert (raised.value.keyword, raised.value.where) == (keyword, where)
        assert repr(keyword) in str(raised.value)


def test_a_schema_no_generated_value_satisfies_is_refused_saying_so() -> None:
    with pytest.raises(UnhandledKeyword) as raised:
        domain({"type": "integer", "not": {}})
    assert "not" in raised.value.keyword.split(", ")
    assert str(raised.value).endswith(
        "at (the member): no generated value satisfies the keywords together (the schema may allow none)"
    )


@pytest.mark.parametrize("version", wire.default_registry().known_versions("rendezvous"))
def test_every_released_member_has_values_and_breaks(version: str) -> None:
    for member in wire.default_registry().wire_model("rendezvous", version).members():
        if member.child is None:
            schema = dict(member.schema)
            assert domain(schema), member.place
            # every member that asserts a keyword can be broken; one of any JSON value (a
            # candidate's {"x-added-in": V}) has nothing to break
            assert bool(breaks(schema)) == bool(wire.asserting(schema)), (member.place, json.dumps(schema))
            assert unbreakable(schema) == (), (member.place, json.dumps(schema))


@pytest.mark.parametrize("name", ["object", "bounded-items", "objects-deep"])
def test_a_value_filled_in_by_one_caller_is_not_what_the_next_one_gets(name: str) -> None:
    """The generators are cached; a blob built around a value (an item replaced, a member added)
    must not change that value for the next caller (a vector tool did, and wrote a marker twice)."""
    for generated in (lambda: domain(SHAPES[name]), lambda: tuple(b.value for b in breaks(SHAPES[name]))):
        first = generated()
        kept = json.dumps(first, sort_keys=True)
        for value in first:
            if isinstance(value, list):
                value.append("filled in")
            elif isinstance(value, dict):
                value["filled_in"] = True
        assert json.dumps(generated(), sort_keys=True) == kept


def test_the_simplest_string_of_a_pattern_is_found_once_and_kept(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import hypothesis
    from refitwire.compat.keywords import _regex

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    pattern = "^x[0-9]{3}$"
    _regex.simplest_match.cache_clear()
    found = _regex.simplest_match(pattern)
    assert re.fullmatch(pattern.strip("^$"), found)
    (kept,) = (tmp_path / "refitwire" / "patterns").iterdir()

    def no_search(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("searched again: the kept string was not read")

    monkeypatch.setattr(hypothesis, "find", no_search)
    _regex.simplest_match.cache_clear()
    assert _regex.simplest_match(pattern) == found  # read back
    kept.write_text(json.dumps("not a match"))  # a kept string that does not match is found again
    _regex.simplest_match.cache_clear()
    with pytest.raises(AssertionError, match="searched again"):
        _regex.simplest_match(pattern)
    _regex.simplest_match.cache_clear()


@pytest.mark.parametrize(
    ("schema", "falsy"),
    [({"type": "integer"}, [False, ""]), ({"type": "string"}, [False, 0]), ({"type": "boolean"}, [0, ""])],
)
def test_a_type_is_broken_with_falsy_values_too(schema: dict[str, Any], falsy: list[Any]) -> None:
    """A reader that checks a member only when it is truthy (``if (step)``) takes ``false``, ``0`` or
    ``""`` for an absent member: each wrong JSON type is also given as its falsy value."""
    found = [(b.keyword, b.value) for b in breaks(schema)]
    for value in falsy:
        assert any(k == "type" and v == value and type(v) is type(value) for k, v in found), (value, found)


@pytest.mark.parametrize("keyword", ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"])
@pytest.mark.parametrize("bound", [10.5, -0.5, 3])
def test_every_bound_of_an_integer_has_an_integer_break_even_a_fractional_bound(
    keyword: str, bound: float
) -> None:
    """A bound's break is the first integer past it, so it breaks that keyword and no other
    (10.5 + 1 is no integer: it would break the type as well, and no vector broke the bound)."""
    schema = {"type": "integer", keyword: bound}
    found = [b for b in breaks(schema) if b.keyword == keyword]
    assert found, f"no break of {keyword} {bound}"
    for b in found:
        assert type(b.value) is int, b
        assert [e.validator for e in jsonschema.Draft202012Validator(schema).iter_errors(b.value)] == [
            keyword
        ]


@pytest.mark.parametrize(
    ("pattern", "every"),
    [
        (r"^(torch\.)?[a-z][a-z0-9_]*$", "torch.aa"),  # the optional group and the starred class
        (r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$", "AAAAAA=="),
        (r"^[^:]+:\d+$", "a:0"),  # a negated class, a category
        (r"^\p{Lu}\p{Ll}+$", None),  # ECMA-262 that Python's parser does not read
    ],
)
def test_a_pattern_string_takes_every_optional_part(pattern: str, every: str | None) -> None:
    from refitwire.compat.keywords._regex import taking_every_part

    assert taking_every_part(pattern) == every


def test_a_pattern_is_broken_one_character_off_at_each_kind_of_place() -> None:
    """A literal of an optional part is broken in place ('torch-aa': an unescaped '.' takes it),
    and a run of one class once, not at every character."""
    schema = {"type": "string", "pattern": r"^(torch\.)?[a-z][a-z0-9_]*$"}
    assert "torch.aa" in domain(schema)
    off = [b.value for b in breaks(schema) if b.keyword == "pattern" and len(b.value) == len("torch.aa")]
    assert "torch-aa" in off
    digest = [
        b.value for b in breaks({"type": "string", "pattern": "^[0-9a-f]{32}$"}) if b.keyword == "pattern"
    ]
    assert sum(v.startswith("-") for v in digest) == 1


def test_items_false_after_prefix_items_is_broken_by_one_item_more() -> None:
    schema = {"type": "array", "prefixItems": [{"type": "integer"}], "items": False}
    extra = [b for b in breaks(schema) if b.keyword == "items"]
    assert [(b.at, len(b.value)) for b in extra] == [((1,), 2)]
    assert [e.validator for e in jsonschema.Draft202012Validator(schema).iter_errors(extra[0].value)] == [
        "items"
    ]


def test_a_closed_object_at_its_member_count_is_broken_by_an_unknown_member_alone() -> None:
    """additionalProperties: false is broken without the optional members, so the break does not
    also pass maxProperties; maxProperties itself cannot be broken alone there (every extra member
    is unknown), which is said, not hidden (regenerate prints it)."""
    schema = {"type": "object", "properties": {"x": {"type": "integer"}}, "maxProperties": 1,
              "additionalProperties": False}  # fmt: skip
    assert [b.value for b in breaks(schema) if b.keyword == "additionalProperties"] == [{"x_unknown": 0}]
    assert unbreakable(schema) == ("maxProperties",)
