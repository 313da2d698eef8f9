"""SPEC.md's rules as part of a released version: locked, and diffed like the schemas.

A released spec version is its schema files *and* the rules SPEC.md's tables give it (read
by ``refitwire.wire.parse_spec``: rule IDs, keywords, pointers, the terms and numbers they
state, the limits and the dtype sizes). So:

* **locked.** ``schema/index.json`` records, for each released version, the sha256 of those
  facts (``spec_rules``); a released version's entry never changes, and a new entry (a
  release) must be the facts' sha256 (``RELEASE_ENTRY_MISMATCH``).
* **released versions never change.** For every released version the ref's rules are
  compared with the working tree's. Each difference is a finding whose rule says the
  direction: a rule added or made stronger (MAY -> SHOULD -> MUST), a limit lowered, a dtype
  size listed: what old writers wrote may now be rejected (BACKWARD); a rule removed or
  weakened, a limit raised, a dtype dropped: what new writers write old readers reject
  (FORWARD); a changed term or number the gate cannot order: both, until reviewed.
* **a new version** (a candidate) is compared with the newest release of its line, as a
  schema change is: a rule added for it is BACKWARD as above, a limit lowered too, and a limit
  raised for it is FORWARD (``SPEC_LIMIT_LOOSENED``): its writers may write a blob past the
  limit released readers are held to, and under FULL every reader reads every writer.
* **released text is locked too**: wording that keeps every fact of a rule or limit row is
  ``SPEC_RULE_REWORDED``, and every other block of a released version's text (prose, steps,
  other tables) is ``SPEC_TEXT_CHANGED`` (``gate/_spec_prose.py``); both fail unless a baseline
  entry acknowledges the change as editorial.

Witnesses (gate/_spec_witness.py), where a blob can show the break: for a lowered blob-size limit a blob one byte
over the new limit that the old version's reader reads; for a rule removed or weakened the
golden vectors the old reader rejects by that very rule (a new writer may now write them); for a
raised blob-size limit a blob one byte over the old limit, valid but for its size.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from refitwire.gate._change import Change
from refitwire.gate._errors import GateError
from refitwire.gate._rules import Direction, Rule
from refitwire.gate._spec_locks import lock_entries, locks, sides
from refitwire.gate._spec_prose import candidate_text, released_text, words
from refitwire.gate._spec_witness import refuted as _refuted
from refitwire.gate._spec_witness import witness as _witness
from refitwire.gate._witness import Witness
from refitwire.wire import (
    LEVELS,
    Registry,
    SpecError,
    SpecRules,
    compile_model,
    join,
    parse_spec,
    parse_version,
    pointer,
    spec_text,
    version_key,
)

SPEC_FILE = "SPEC.md"


@dataclass(frozen=True)
class SpecFinding:
    """One difference in the rules of ``version`` (the released version, or the candidate's base)."""

    change: Change
    against: str | None
    witnesses: tuple[Witness, ...] = ()
    no_witness: tuple[Direction, ...] = ()
    file: str = ""  # where it is placed: SPEC.md, or the index for a lock


def judge(
    base_file: tuple[str, bytes],
    work_file: tuple[str, bytes | None],
    indexes: tuple[dict[str, Any], dict[str, Any], str],
    candidates: list[tuple[str, Any]],
    witnesses: bool,
    registry: Registry,
) -> list[SpecFinding]:
    """Every finding about SPEC.md's rules: ``base_file`` and ``work_file`` are (where, bytes) of the
    ref's and the working tree's SPEC.md (None: gone), ``indexes`` the ref's and the working tree's
    index and the index's path, ``candidates`` (version, schema) of each candidate file."""
    relative, data = work_file
    if data is None:
        detail = f"{relative} is gone: it holds the rules of every released version"
        return [SpecFinding(Change(Rule.RELEASED_FILE_REMOVED, "", "", detail), None, file=relative)]
    base, work = load(*base_file), load(relative, data)
    first = (base.versions or work.versions or ("1.0.0",))[0]
    base_text, work_text = (
        spec_text(base_file[1].decode("utf-8"), first),
        spec_text(data.decode("utf-8"), first),
    )
    base_index, work_index, index_file = indexes
    released = versions_at(base_index)
    out = [
        SpecFinding(ch, None, file=f)
        for key, old, new in (("spec_rules", base, work), ("spec_text", base_text, work_text))
        for ch, f in locks(key, old.lock, new.lock, base_index, work_index, relative, index_file)
    ]
    out += [
        SpecFinding(ch, v, shown, file=relative)
        for ch, v, shown in released_text(base_text, work_text, released, registry if witnesses else None)
    ]
    out += [
        SpecFinding(ch, v, (), ch.directions if ch.breaking else (), file=relative)  # prose: no blob built
        for ch, v in candidate_text(work_text, [v for v, _ in candidates], released, work)
    ]
    checked_by = sides(registry, base_file[1].decode("utf-8"), data.decode("utf-8"), candidates)
    found = list(diff_released(base, work, released, witnesses, registry, checked_by))
    for version in sorted({v for v, _ in candidates}, key=version_key):
        read = [candidate_members(schema, version) for v, schema in candidates if v == version]
        adds = frozenset().union(*(a for a, _ in read))
        found += diff_candidate(
            work,
            version,
            released,
            adds,
            witnesses,
            registry,
            frozenset().union(*(o for _, o in read)) - adds,
            checked_by,
        )
    out += [replace(f, file=relative) for f in found]
    for version, digest in lock_entries(base_index).items():  # a changed fact no rule above names
        if work.lock(version) != digest and not any(
            f.against == version and f.change.breaking for f in found
        ):
            now = work.lock(version)
            changed = _changed_facts(base.facts(version), work.facts(version)) if version in released else []
            detail = f"SPEC.md's rules of released {version} changed: sha256 {now[:12]}, locked {digest[:12]}"
            detail += f" ({', '.join(changed[:5])}{' ...' if len(changed) > 5 else ''})" if changed else ""
            at = changed[0] if changed else ""
            out.append(
                SpecFinding(
                    Change(Rule.RELEASED_FILE_MODIFIED, at, "", detail, digest, now), None, file=relative
                )
            )
    return out


def _changed_facts(old: Any, new: Any, at: str = "") -> list[str]:
    """The pointers of the facts (:meth:`SpecRules.facts`) that differ between ``old`` and ``new``."""
    if isinstance(old, dict) and isinstance(new, dict):
        return [
            p
            for key in sorted(old.keys() | new.keys())
            for p in _changed_facts(old.get(key), new.get(key), join(at, key))
        ]
    return [] if old == new else [at]


def load(source: str, data: bytes) -> SpecRules:
    """The rules of one SPEC.md; GateError (one line) when a table row cannot be read."""
    try:
        return parse_spec(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise GateError(source, f"not UTF-8: {exc}") from None
    except SpecError as exc:  # (its message starts "SPEC.md line N": the source names the file)
        raise GateError(source, str(exc).removeprefix("SPEC.md ")) from None


def diff_released(
    base: SpecRules, work: SpecRules, released: list[str], search: bool, registry: Registry,
    sides: tuple[Registry, Registry] | None = None,
) -> Iterator[SpecFinding]:  # fmt: skip
    """What the change does to the rules of each released version (``sides``: :func:`sides`)."""
    for version in released:
        context = _Context(False, frozenset(), frozenset(), search, version, registry, sides)
        yield from _diff(base, work, version, version, context)


def diff_candidate(work: SpecRules, candidate: str, released: list[str], new_members: frozenset[str],
                   search: bool, registry: Registry, old_members: frozenset[str] = frozenset(),
                   sides: tuple[Registry, Registry] | None = None) -> Iterator[SpecFinding]:  # fmt: skip
    """A candidate's rules against the newest release of its line (as the working tree states it,
    so a change to the released versions is reported once, there). A rule added with the
    candidate that names a member the candidate adds, and none of ``old_members``, is
    additive: no old blob carries it."""
    key = version_key(candidate)
    line = [v for v in released if version_key(v)[:1] == key[:1] and version_key(v) < key]
    if line:
        yield from _diff(
            work,
            work,
            max(line, key=version_key),
            candidate,
            _Context(
                True,
                new_members,
                old_members,
                search,
                candidate,
                registry,
                (sides[1], sides[1]) if sides else None,
            ),
        )


@dataclass(frozen=True)
class _Context:
    new_version: bool  # the version compared is a candidate, not a released one
    new_members: frozenset[str]  # the members the candidate adds
    old_members: frozenset[str]  # the names of its other members (at any depth)
    search: bool  # look for witnesses
    compared: str  # the version whose rules are judged (the released one, or the candidate)
    registry: Registry  # whose released readers check each witness
    #: the reference as the old side's and the changed side's SPEC.md say (:func:`sides`), which
    #: check every witness before it is shown; None: not checked (a caller without SPEC.md's texts)
    sides: tuple[Registry, Registry] | None = None


def _diff(
    old: SpecRules, new: SpecRules, old_version: str, new_version_id: str, ctx: _Context
) -> Iterator[SpecFinding]:
    before, after = old.rules_of(old_version), new.rules_of(new_version_id)
    against = old_version
    for rule_id in sorted(set(before) | set(after)):
        at = pointer("rules", rule_id)
        a, b = before.get(rule_id), after.get(rule_id)
        if b is None and a is not None:
            detail = f"rule {rule_id} ({'/'.join(a.keywords) or 'no keyword'}) no longer applies to {new_version_id}"
            yield _found(
                Rule.SPEC_RULE_REMOVED, at, detail, a.facts(), None, against, old_version, ctx, rule_id
            )
        elif a is None and b is not None:
            detail = f"rule {rule_id} ({'/'.join(b.keywords) or 'no keyword'}) now applies to {new_version_id}: {b.text[:160]}"
            new_member = sorted(ctx.new_members.intersection(b.terms))
            old_member = sorted(ctx.old_members.intersection(b.terms))
            if ctx.new_version and new_member:
                detail += f" (about {', '.join(new_member)}, which {new_version_id} adds"
                detail += f"; and {', '.join(old_member)}, which old blobs carry)" if old_member else ")"
            additive = ctx.new_version and new_member and not old_member  # else it may fire on old blobs
            rule = Rule.SPEC_RULE_ADDED_WITH_MEMBER if additive else Rule.SPEC_RULE_ADDED
            if ctx.new_version and b.advises_writers:  # no reader rejects a blob for it
                rule = Rule.SPEC_RULE_ADDED_FOR_WRITERS
                detail += f" (it binds only {new_version_id}'s writers, as a {'/'.join(b.keywords)})"
            yield _found(rule, at, detail, None, b.facts(), against, old_version, ctx, rule_id)
        elif a is not None and b is not None:
            yield from _changed_rule(a, b, at, against, old_version, new_version_id, old, new, ctx)
    yield from _limits(old, new, old_version, new_version_id, against, ctx)
    yield from _dtypes(
        old.dtype_sizes_of(old_version), new.dtype_sizes_of(new_version_id), against, old_version, ctx
    )


def _changed_rule(a: Any, b: Any, at: str, against: str, old_version: str, version: str,
                  old: SpecRules, new: SpecRules, ctx: _Context) -> Iterator[SpecFinding]:  # fmt: skip
    def found(rule: Rule, where: str, detail: str, was: Any, now: Any) -> SpecFinding:
        return _found(rule, at + where, detail, was, now, against, old_version, ctx, a.id)

    if a.level != b.level:
        stronger = b.level > a.level
        detail = (f"rule {a.id} for {version}: {'/'.join(a.keywords)} -> {'/'.join(b.keywords)} "
                  f"({_level(a.level)} -> {_level(b.level)})")  # fmt: skip
        rule = Rule.SPEC_RULE_STRENGTHENED if stronger else Rule.SPEC_RULE_WEAKENED
        yield found(rule, pointer("keywords"), detail, list(a.keywords), list(b.keywords))
    elif a.keywords != b.keywords:
        detail = f"rule {a.id} for {version}: keywords {'/'.join(a.keywords)} -> {'/'.join(b.keywords)}"
        yield found(Rule.SPEC_RULE_CHANGED, pointer("keywords"), detail, list(a.keywords), list(b.keywords))
    if section_number(a.section) != section_number(b.section):  # who checks it, where 2.7 orders it
        detail = f"rule {a.id} for {version}: moved from section {a.section!r} to {b.section!r}"
        yield found(Rule.SPEC_RULE_CHANGED, pointer("section"), detail, a.section, b.section)
    if a.pointer != b.pointer:
        detail = f"rule {a.id} for {version}: pointer {a.pointer!r} -> {b.pointer!r}"
        yield found(Rule.SPEC_RULE_POINTER_CHANGED, pointer("pointer"), detail, a.pointer, b.pointer)
    numbers = _unexplained(a, b, old.limits_of(old_version), new.limits_of(version))
    for what, x, y in (
        ("terms", a.terms, b.terms),
        ("numbers", numbers[0], numbers[1]),
        ("ends", a.ends, b.ends),
    ):
        if x != y:
            detail = (
                f"rule {a.id} for {version}: {what} {', '.join(x) or '(none)'} -> {', '.join(y) or '(none)'}"
            )
            yield found(Rule.SPEC_RULE_CHANGED, pointer(what), detail, list(x), list(y))
    if (
        a.facts() == b.facts()
        and (a.section, a.ends) == (b.section, b.ends)
        and " ".join(a.text.split()) != " ".join(b.text.split())
    ):
        detail = f"rule {a.id} (section {a.section}): its wording changed, its facts kept (released text is locked):\n"
        yield found(Rule.SPEC_RULE_REWORDED, "", detail + "\n".join(words(a.text, b.text)), a.text, b.text)


def _level(level: int) -> str:
    return LEVELS[level] if level >= 0 else "none"


def _unexplained(
    a: Any, b: Any, old_limits: dict[str, Any], new_limits: dict[str, Any]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A rule's numbers, less a limit's value that the limit row changed the same way (the
    change is reported once, as the limit's)."""
    x, y = list(a.numbers), list(b.numbers)
    for name, limit in old_limits.items():
        now = new_limits.get(name)
        if limit.rule.strip("`") != a.id or now is None or limit.value == now.value:
            continue
        if str(limit.value) in x and str(now.value) in y:
            x.remove(str(limit.value))
            y.remove(str(now.value))
    return tuple(x), tuple(y)


def _limits(
    old: SpecRules, new: SpecRules, old_version: str, version: str, against: str, ctx: _Context
) -> Iterator[SpecFinding]:
    before, after = old.limits_of(old_version), new.limits_of(version)
    for name in sorted(set(before) | set(after)):
        at = pointer("limits", name)
        a, b = before.get(name), after.get(name)
        if b is None and a is not None:
            yield _found(Rule.SPEC_LIMIT_REMOVED, at, f"limit {name!r} ({a.stated or a.rule}) no longer applies to {version}",
                         a.facts(), None, against, old_version, ctx)  # fmt: skip
            continue
        if a is None and b is not None:
            yield _found(Rule.SPEC_LIMIT_ADDED, at, f"limit {name!r} ({b.stated or b.rule}) now applies to {version}",
                         None, b.facts(), against, old_version, ctx)  # fmt: skip
            continue
        assert a is not None and b is not None
        if a.value != b.value and a.value is not None and b.value is not None:
            lower = b.value < a.value
            # raised, even for a new version only: its writers may write past what released
            # readers must read (and SHOULD reject), and FULL has every reader read every writer
            rule = Rule.SPEC_LIMIT_TIGHTENED if lower else Rule.SPEC_LIMIT_LOOSENED
            detail = (
                f"limit {name!r} ({a.rule}) for {version}: {a.stated} -> {b.stated} ({a.value} -> {b.value})"
            )
            yield _found(
                rule,
                join(at, "value"),
                detail,
                a.value,
                b.value,
                against,
                old_version,
                ctx,
                a.rule.strip("`"),
                (a.value, b.value),
            )
        if a.keywords != b.keywords or a.tiers != b.tiers:
            # A limit's reader column holds duties both ways (MUST read up to it, SHOULD reject past
            # it), so no keyword or tier moved says which direction breaks: both, until reviewed.
            detail = (f"limit {name!r} for {version}: {'/'.join(a.keywords)} ({', '.join(a.tiers) or 'no tier'}) -> "
                      f"{'/'.join(b.keywords)} ({', '.join(b.tiers) or 'no tier'})")  # fmt: skip
            yield _found(Rule.SPEC_RULE_CHANGED, join(at, "keywords"), detail, a.facts(), b.facts(), against,
                         old_version, ctx)  # fmt: skip
        elif a.rule != b.rule:
            detail = f"limit {name!r} for {version}: {a.rule} {'/'.join(a.keywords)} -> {b.rule} {'/'.join(b.keywords)}"
            yield _found(Rule.SPEC_RULE_CHANGED, at, detail, a.facts(), b.facts(), against, old_version, ctx)
        elif a.value == b.value and " ".join(a.text.split()) != " ".join(b.text.split()):
            detail = f"limit {name!r}: its wording changed, its facts kept (released text is locked):\n"
            detail += "\n".join(words(" ".join(a.text.split()), " ".join(b.text.split())))
            yield _found(Rule.SPEC_RULE_REWORDED, at, detail, a.text, b.text, against, old_version, ctx)


def _dtypes(
    before: dict[str, int], after: dict[str, int], against: str, version: str, ctx: _Context
) -> Iterator[SpecFinding]:
    for label in sorted(set(before) | set(after)):
        a, b = before.get(label), after.get(label)
        if a == b:
            continue
        at = pointer("dtype_sizes", label)
        if a is None:
            rule, detail = (
                Rule.SPEC_RULE_STRENGTHENED,
                f"ELSIZE_DTYPE now lists {label!r} ({b} bytes): other sizes are rejected",
            )
        elif b is None:
            rule, detail = Rule.SPEC_RULE_WEAKENED, f"ELSIZE_DTYPE no longer lists {label!r} ({a} bytes)"
        else:
            rule, detail = Rule.SPEC_RULE_CHANGED, f"ELSIZE_DTYPE: {label!r} is {a} -> {b} bytes"
        yield _found(rule, at, detail, a, b, against, version, ctx, "ELSIZE_DTYPE", dtype=(label, a, b))


def _found(rule: Rule, at: str, detail: str, old: Any, new: Any, against: str, version: str, ctx: _Context,
           spec_rule: str | None = None, limit: tuple[int, int] | None = None,
           dtype: tuple[str, int | None, int | None] | None = None) -> SpecFinding:  # fmt: skip
    change = Change(rule, at, "", detail, old, new)
    if not change.breaking or not ctx.search:
        return SpecFinding(change, against)
    found: list[Witness] = []
    missing: list[Direction] = []
    for direction in change.directions:
        by_rule = spec_rule if rule in (Rule.SPEC_RULE_REMOVED, Rule.SPEC_RULE_WEAKENED) else None
        witness = _witness(
            direction,
            version,
            by_rule if limit is None and dtype is None else spec_rule,
            limit,
            dtype,
            ctx.registry,
        )
        if witness is not None:
            changed = f"{ctx.compared} (SPEC.md as changed)"
            old_side = f"{version} (the ref's SPEC.md)" if not ctx.new_version else f"{version} (SPEC.md)"
            writer, reader = (old_side, changed) if direction == "BACKWARD" else (changed, old_side)
            witness = replace(witness, writer=writer, reader=reader,
                              writer_version=version if direction == "BACKWARD" else ctx.compared,
                              reader_version=ctx.compared if direction == "BACKWARD" else version)  # fmt: skip
            checked = _refuted(witness, spec_rule, *ctx.sides) if ctx.sides else (None, witness.rejection)
            why, rejection = checked
            witness = None if why is not None else replace(witness, rejection=rejection or witness.rejection)
        if witness is None:
            missing.append(direction)
        else:
            found.append(witness)
    return SpecFinding(change, against, tuple(found), tuple(missing))


def versions_at(index: dict[str, Any]) -> list[str]:
    """The released versions an index lists (the spec versions of its documents), oldest first."""
    found = {e["version"] for entries in index["documents"].values() for e in entries}
    return sorted((v for v in found if parse_version(v) is not None), key=version_key)


def section_number(heading: str) -> str:
    """A section heading's number (``"2.3 Geometry"`` -> ``"2.3"``), else the heading: a retitled
    section keeps its rules where they were."""
    first = heading.split(" ", 1)[0]
    return first if first[:1].isdigit() else heading


def candidate_members(schema: Any, version: str) -> tuple[frozenset[str], frozenset[str]]:
    """The names of the members candidate ``schema`` adds in ``version``, and of its other ones,
    read through the wire model (each member's ``added_in``), at every level."""
    members = list(compile_model(schema, "candidate").members())
    adds = frozenset(m.name for m in members if m.added_in == version)
    return adds, frozenset(m.name for m in members) - adds
