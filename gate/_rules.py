"""The rule catalogue: every kind of schema change the gate names, with a stable ID.

Rule IDs are never reused or renamed (as in SPEC.md). Each rule has a category, a
severity and the directions in which it breaks compatibility:

* ``BACKWARD``: new readers on old blobs (a blob an old writer may write is rejected by
  the new schema);
* ``FORWARD``: old readers on new blobs (a blob a new writer may write is rejected by the
  old schema).

Categories, loosely after buf's: ``WIRE`` (some conforming blob is rejected by some
reader), ``POLICY`` (no blob of today's writers separates the versions, but the evolution
policy forbids the change), ``ANNOTATION`` (no effect on any blob), ``RELEASE`` (released
files are locked), ``BASELINE`` (the accepted-breaks file itself), ``GATE`` (the gate could
not classify the change or check the candidate), ``SPEC`` (SPEC.md's rule tables: a released
version's rules are locked like its schema files).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "info"]
Direction = Literal["BACKWARD", "FORWARD"]

#: Human wording of each direction, used in every report format.
DIRECTION_TEXT: dict[str, str] = {
    "BACKWARD": "new readers on old blobs",
    "FORWARD": "old readers on new blobs",
}


@dataclass(frozen=True)
class Rule:
    id: str
    category: str
    severity: Severity
    directions: tuple[Direction, ...]
    doc: str

    @property
    def breaking(self) -> bool:
        return self.severity == "error"


_B: tuple[Direction, ...] = ("BACKWARD",)
_F: tuple[Direction, ...] = ("FORWARD",)
_BF: tuple[Direction, ...] = ("BACKWARD", "FORWARD")
_NONE: tuple[Direction, ...] = ()

_CATALOGUE = (
    # Properties and presence
    Rule(
        "PROPERTY_ADDED_OPTIONAL",
        "WIRE",
        "info",
        _NONE,
        "An optional property was added: old readers ignore it, new readers do not need it.",
    ),
    Rule(
        "PROPERTY_ADDED_REQUIRED",
        "WIRE",
        "error",
        _B,
        "A required property was added: blobs of old writers lack it.",
    ),
    Rule(
        "PROPERTY_ADDED_TO_CLOSED_OBJECT",
        "WIRE",
        "error",
        _F,
        "A property was added to an object that rejects unknown members: old readers reject new blobs.",
    ),
    Rule(
        "PROPERTY_REMOVED_OPTIONAL",
        "POLICY",
        "error",
        _NONE,
        "An optional property was removed: its meaning is gone for old readers; needs a major version.",
    ),
    Rule(
        "PROPERTY_REMOVED_REQUIRED",
        "WIRE",
        "error",
        _F,
        "A required property was removed: blobs of new writers lack what old readers require.",
    ),
    Rule(
        "PROPERTY_REMOVED_FROM_CLOSED_OBJECT",
        "WIRE",
        "error",
        _B,
        "A property was removed from an object that rejects unknown members: old blobs carrying it are rejected.",
    ),
    Rule(
        "REQUIRED_ADDED",
        "WIRE",
        "error",
        _B,
        "An optional property was made required: blobs of old writers may omit it.",
    ),
    Rule(
        "REQUIRED_REMOVED",
        "WIRE",
        "error",
        _F,
        "A required property was made optional: blobs of new writers may omit what old readers require.",
    ),
    # Types and nullability
    Rule("TYPE_CHANGED", "WIRE", "error", _BF, "The JSON type of a value changed."),
    Rule(
        "TYPE_WIDENED",
        "WIRE",
        "error",
        _F,
        "A value accepts more JSON types: new writers may write one old readers reject.",
    ),
    Rule(
        "TYPE_NARROWED",
        "WIRE",
        "error",
        _B,
        "A value accepts fewer JSON types: old writers may write one new readers reject.",
    ),
    Rule(
        "NULLABLE_ADDED",
        "WIRE",
        "error",
        _F,
        "null became allowed for an existing value: writers must omit, never write null (WRITE_OMIT_ABSENT), "
        "and old readers reject it.",
    ),
    Rule(
        "NULLABLE_REMOVED",
        "WIRE",
        "error",
        _B,
        "null is no longer allowed: readers must read null as absent (READ_NULL_IS_ABSENT).",
    ),
    # Values
    Rule("ENUM_VALUE_ADDED", "WIRE", "error", _F, "An allowed value was added to an enum or const."),
    Rule("ENUM_VALUE_REMOVED", "WIRE", "error", _B, "An allowed value was removed from an enum or const."),
    Rule("ENUM_INTRODUCED", "WIRE", "error", _B, "A value was restricted to an enum or const."),
    Rule("ENUM_DROPPED", "WIRE", "error", _F, "An enum or const restriction was dropped."),
    Rule("CONST_CHANGED", "WIRE", "error", _BF, "A const value changed."),
    Rule(
        "WIRE_ID_CHANGED",
        "WIRE",
        "error",
        _BF,
        "The on-wire schema id changed: every reader of the other id rejects every blob (a new major only).",
    ),
    Rule(
        "NUMERIC_BOUND_TIGHTENED",
        "WIRE",
        "error",
        _B,
        "minimum/maximum/exclusive bounds or multipleOf now reject values old writers may write.",
    ),
    Rule(
        "NUMERIC_BOUND_LOOSENED",
        "WIRE",
        "error",
        _F,
        "minimum/maximum/exclusive bounds or multipleOf now allow values old readers reject.",
    ),
    Rule(
        "MULTIPLE_OF_CHANGED",
        "WIRE",
        "error",
        _BF,
        "multipleOf changed to a step that neither divides nor is divided by the old one.",
    ),
    Rule(
        "LENGTH_BOUND_TIGHTENED",
        "WIRE",
        "error",
        _B,
        "A length bound (min/maxLength, min/maxItems, min/maxProperties) now rejects what old writers write.",
    ),
    Rule(
        "LENGTH_BOUND_LOOSENED",
        "WIRE",
        "error",
        _F,
        "A length bound (min/maxLength, min/maxItems, min/maxProperties) now allows what old readers reject.",
    ),
    Rule("PATTERN_ADDED", "WIRE", "error", _B, "A string pattern was added."),
    Rule("PATTERN_REMOVED", "WIRE", "error", _F, "A string pattern was removed."),
    Rule("PATTERN_CHANGED", "WIRE", "error", _BF, "A string pattern changed."),
    Rule("UNIQUE_ITEMS_ADDED", "WIRE", "error", _B, "uniqueItems was switched on."),
    Rule("UNIQUE_ITEMS_REMOVED", "WIRE", "error", _F, "uniqueItems was switched off."),
    # Content model
    Rule(
        "ADDITIONAL_PROPERTIES_CLOSED",
        "POLICY",
        "error",
        _B,
        "An object no longer accepts every unknown member (false, or a schema they must match): readers "
        "must ignore them (READ_IGNORE_UNKNOWN), so blobs of later writers break.",
    ),
    Rule(
        "ADDITIONAL_PROPERTIES_OPENED",
        "WIRE",
        "info",
        _NONE,
        "An object now accepts unknown members, as READ_IGNORE_UNKNOWN asks.",
    ),
    # Annotations
    Rule(
        "ANNOTATION_CHANGED",
        "ANNOTATION",
        "info",
        _NONE,
        "Only an annotation changed (description, title, examples, x-rule, ...): no blob is affected.",
    ),
    Rule(
        "EQUIVALENT_REWRITE",
        "ANNOTATION",
        "info",
        _NONE,
        "A keyword was rewritten into a provably equivalent form (a reordered character class, "
        "an integer bound as its exclusive neighbour): no blob is affected.",
    ),
    Rule(
        "ADDED_IN_MISSING",
        "ANNOTATION",
        "error",
        _NONE,
        "A property has no x-added-in annotation: every member must name the version that added it.",
    ),
    Rule(
        "ADDED_IN_MISMATCH",
        "ANNOTATION",
        "error",
        _NONE,
        "A new property's x-added-in is not the version of the document that adds it.",
    ),
    Rule(
        "ADDED_IN_CHANGED",
        "ANNOTATION",
        "error",
        _NONE,
        "An existing property's x-added-in changed: released history is rewritten.",
    ),
    # Releases and versions
    Rule(
        "RELEASED_FILE_MODIFIED",
        "RELEASE",
        "error",
        _NONE,
        "A released schema file (or its index entry) changed: released files never change.",
    ),
    Rule("RELEASED_FILE_REMOVED", "RELEASE", "error", _NONE, "A released schema file was removed."),
    Rule(
        "VERSION_NOT_NEWER",
        "RELEASE",
        "error",
        _NONE,
        "A candidate's version is not newer than every released version of its document.",
    ),
    Rule(
        "VERSION_STAMP_MISMATCH",
        "RELEASE",
        "error",
        _NONE,
        "A schema file's name, x-spec-version and $id do not name the same version.",
    ),
    Rule(
        "RELEASE_ENTRY_MISMATCH",
        "RELEASE",
        "error",
        _NONE,
        "A new index entry disagrees with its file (sha256, path, version stamps) or is not MAJOR.MINOR.PATCH.",
    ),
    Rule(
        "DOCUMENT_UNKNOWN",
        "RELEASE",
        "error",
        _NONE,
        "A new folder of schema files under schema/ that no index names: the gate cannot check it.",
    ),
    Rule(
        "MAJOR_WITHOUT_NEW_WIRE_ID",
        "RELEASE",
        "error",
        _NONE,
        "A new major version keeps the on-wire schema id of the old one.",
    ),
    Rule(
        "MAJOR_VERSION_BREAK",
        "RELEASE",
        "info",
        _NONE,
        "A breaking change across a major version boundary: allowed (with a new wire id).",
    ),
    # SPEC.md's rules (gate/_spec.py): a released version's rules never change
    Rule(
        "SPEC_RULE_ADDED",
        "SPEC",
        "error",
        _B,
        "A SPEC.md rule now applies to a version it did not: blobs old writers wrote may break it.",
    ),
    Rule(
        "SPEC_RULE_ADDED_WITH_MEMBER",
        "SPEC",
        "info",
        _NONE,
        "A new version's SPEC.md rule about a member that version adds, naming none that old blobs carry: no "
        "blob of an old writer carries it.",
    ),
    Rule(
        "SPEC_RULE_REMOVED",
        "SPEC",
        "error",
        _F,
        "A SPEC.md rule no longer applies to a version: new writers may write what old readers reject.",
    ),
    Rule(
        "SPEC_RULE_STRENGTHENED",
        "SPEC",
        "error",
        _B,
        "A SPEC.md rule (or dtype size) is stronger (MAY -> SHOULD -> MUST, a dtype listed): what old writers "
        "wrote may now be rejected.",
    ),
    Rule(
        "SPEC_RULE_WEAKENED",
        "SPEC",
        "error",
        _F,
        "A SPEC.md rule (or dtype size) is weaker (MUST -> SHOULD -> MAY, a dtype dropped): new writers may "
        "write what old readers reject.",
    ),
    Rule(
        "SPEC_RULE_CHANGED",
        "SPEC",
        "error",
        _BF,
        "A SPEC.md rule's terms, numbers, keywords or section (or a limit's duties or tiers) changed in a way the "
        "gate cannot order: breaking until reviewed.",
    ),
    Rule(
        "SPEC_RULE_POINTER_CHANGED",
        "SPEC",
        "error",
        _NONE,
        "The pointer a SPEC.md rule names changed: readers of the version name another value (rule IDs and "
        "their pointers are stable).",
    ),
    Rule(
        "SPEC_RULE_REWORDED",
        "SPEC",
        "error",
        _NONE,
        "Only the wording of a released SPEC.md rule or limit changed (its keywords, terms, numbers and pointer "
        "kept): released text is locked; an editorial change passes only through a baseline entry.",
    ),
    Rule(
        "SPEC_TEXT_CHANGED",
        "SPEC",
        "error",
        _NONE,
        "The text of a released version in SPEC.md changed (prose, a step, a table row): implementations are "
        "judged by it, so released text never changes; an editorial change passes only through a baseline "
        "entry.",
    ),
    Rule(
        "SPEC_TEXT_ADDED",
        "SPEC",
        "info",
        _NONE,
        "A new version's own SPEC.md text (a block stamped with that version) stating no RFC 2119 keyword: "
        "no released version's text changed.",
    ),
    Rule(
        "SPEC_LIMIT_TIGHTENED",
        "SPEC",
        "error",
        _B,
        "A SPEC.md limit was lowered: a blob between the new and the old limit, which old writers may write, "
        "is now rejected.",
    ),
    Rule(
        "SPEC_LIMIT_LOOSENED",
        "SPEC",
        "error",
        _F,
        "A SPEC.md limit was raised (for a released version, or for a new one over its line's): writers may now "
        "write more than released readers are held to read.",
    ),
    Rule(
        "SPEC_LIMIT_ADDED",
        "SPEC",
        "error",
        _B,
        "A SPEC.md limit now applies to a version it did not: blobs old writers wrote may exceed it.",
    ),
    Rule(
        "SPEC_LIMIT_REMOVED",
        "SPEC",
        "error",
        _F,
        "A SPEC.md limit no longer applies to a version: new writers may write what old readers reject.",
    ),
    # The gate itself
    Rule(
        "UNCLASSIFIED_CHANGE",
        "GATE",
        "error",
        _BF,
        "A keyword the gate does not model changed (allOf, anyOf, if, ...): breaking until reviewed.",
    ),
    Rule("BASELINE_STALE", "BASELINE", "error", _NONE, "A baseline entry matches no finding: remove it."),
    Rule("BASELINE_EXPIRED", "BASELINE", "error", _NONE, "A baseline entry has expired."),
    Rule(
        "MATRIX_DISAGREES",
        "GATE",
        "error",
        _NONE,
        "The rule-based verdict and the runtime compat matrix disagree.",
    ),
)

RULES: dict[str, Rule] = {rule.id: rule for rule in _CATALOGUE}


def rule(rule_id: str) -> Rule:
    """The catalogue entry of ``rule_id`` (KeyError for an unknown ID)."""
    return RULES[rule_id]
