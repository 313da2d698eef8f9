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

Each rule is one member of :class:`Rule`, its ID written once, there. Code names a rule by its
member (``Rule.TYPE_CHANGED``), never by its text, so a misspelt rule is an AttributeError and a
type error rather than a new rule nobody documented; tests/gate/test_rule_catalogue.py checks that
every rule is emitted by some gate module and that no gate module spells a rule ID as text.
"""

from __future__ import annotations

from enum import Enum
from typing import Literal

Severity = Literal["error", "info"]
Direction = Literal["BACKWARD", "FORWARD"]

#: Human wording of each direction, used in every report format.
DIRECTION_TEXT: dict[str, str] = {
    "BACKWARD": "new readers on old blobs",
    "FORWARD": "old readers on new blobs",
}


_B: tuple[Direction, ...] = ("BACKWARD",)
_F: tuple[Direction, ...] = ("FORWARD",)
_BF: tuple[Direction, ...] = ("BACKWARD", "FORWARD")
_NONE: tuple[Direction, ...] = ()


class Rule(str, Enum):
    """One rule of the catalogue: its ID (the member's value, a ``str``), category, severity,
    the directions it breaks and its meaning.

    A member is its ID as a string (reports, baselines and SARIF carry the text), so it compares,
    hashes, sorts and serialises as the ID does.
    """

    _value_: str
    category: str
    severity: Severity
    directions: tuple[Direction, ...]
    doc: str
    #: what to do about a failing finding of the rule, where accepting it in the baseline is the
    #: wrong advice ("": accept it there, if it is safe)
    remedy: str

    def __new__(
        cls, rule_id: str, category: str, severity: Severity, directions: tuple[Direction, ...], doc: str,
        remedy: str = "",
    ) -> Rule:  # fmt: skip
        member = str.__new__(cls, rule_id)
        member._value_ = rule_id
        member.category, member.severity, member.directions, member.doc = category, severity, directions, doc
        member.remedy = remedy
        return member

    # The ID, as str and StrEnum (3.11) give it: every report, message and f-string shows the ID.
    def __str__(self) -> str:
        return self._value_

    def __format__(self, spec: str) -> str:
        return format(self._value_, spec)

    @property
    def id(self) -> str:
        return self._value_

    @property
    def breaking(self) -> bool:
        return self.severity == "error"

    # The catalogue, one member per rule: ID, category, severity, directions broken, meaning.
    # fmt: off
    # Properties and presence
    PROPERTY_ADDED_OPTIONAL = ("PROPERTY_ADDED_OPTIONAL", "WIRE", "info", _NONE,
        "An optional property was added: old readers ignore it, new readers do not need it.")
    PROPERTY_ADDED_REQUIRED = ("PROPERTY_ADDED_REQUIRED", "WIRE", "error", _B,
        "A required property was added: blobs of old writers lack it.")
    PROPERTY_ADDED_TO_CLOSED_OBJECT = ("PROPERTY_ADDED_TO_CLOSED_OBJECT", "WIRE", "error", _F,
        "A property was added to an object that rejects unknown members: old readers reject new "
        "blobs.")
    PROPERTY_REMOVED_OPTIONAL = ("PROPERTY_REMOVED_OPTIONAL", "POLICY", "error", _NONE,
        "An optional property was removed: its meaning is gone for old readers; needs a major "
        "version.")
    PROPERTY_REMOVED_REQUIRED = ("PROPERTY_REMOVED_REQUIRED", "WIRE", "error", _F,
        "A required property was removed: blobs of new writers lack what old readers require.")
    PROPERTY_REMOVED_FROM_CLOSED_OBJECT = ("PROPERTY_REMOVED_FROM_CLOSED_OBJECT", "WIRE", "error", _B,
        "A property was removed from an object that rejects unknown members: old blobs carrying "
        "it are rejected.")
    REQUIRED_ADDED = ("REQUIRED_ADDED", "WIRE", "error", _B,
        "An optional property was made required: blobs of old writers may omit it.")
    REQUIRED_REMOVED = ("REQUIRED_REMOVED", "WIRE", "error", _F,
        "A required property was made optional: blobs of new writers may omit what old readers "
        "require.")
    # Types and nullability
    TYPE_CHANGED = ("TYPE_CHANGED", "WIRE", "error", _BF, "The JSON type of a value changed.")
    TYPE_WIDENED = ("TYPE_WIDENED", "WIRE", "error", _F,
        "A value accepts more JSON types: new writers may write one old readers reject.")
    TYPE_NARROWED = ("TYPE_NARROWED", "WIRE", "error", _B,
        "A value accepts fewer JSON types: old writers may write one new readers reject.")
    NULLABLE_ADDED = ("NULLABLE_ADDED", "WIRE", "error", _F,
        "null became allowed for an existing value: writers must omit, never write null "
        "(WRITE_OMIT_ABSENT), and old readers reject it.")
    NULLABLE_REMOVED = ("NULLABLE_REMOVED", "WIRE", "error", _B,
        "null is no longer allowed: readers must read null as absent (READ_NULL_IS_ABSENT).")
    # Values
    ENUM_VALUE_ADDED = ("ENUM_VALUE_ADDED", "WIRE", "error", _F,
        "An allowed value was added to an enum or const.")
    ENUM_VALUE_REMOVED = ("ENUM_VALUE_REMOVED", "WIRE", "error", _B,
        "An allowed value was removed from an enum or const.")
    ENUM_INTRODUCED = ("ENUM_INTRODUCED", "WIRE", "error", _B, "A value was restricted to an enum or const.")
    ENUM_DROPPED = ("ENUM_DROPPED", "WIRE", "error", _F, "An enum or const restriction was dropped.")
    CONST_CHANGED = ("CONST_CHANGED", "WIRE", "error", _BF, "A const value changed.")
    WIRE_ID_CHANGED = ("WIRE_ID_CHANGED", "WIRE", "error", _BF,
        "The on-wire schema id changed: every reader of the other id rejects every blob (a new "
        "major only).")
    NUMERIC_BOUND_TIGHTENED = ("NUMERIC_BOUND_TIGHTENED", "WIRE", "error", _B,
        "minimum/maximum/exclusive bounds or multipleOf now reject values old writers may write.")
    NUMERIC_BOUND_LOOSENED = ("NUMERIC_BOUND_LOOSENED", "WIRE", "error", _F,
        "minimum/maximum/exclusive bounds or multipleOf now allow values old readers reject.")
    MULTIPLE_OF_CHANGED = ("MULTIPLE_OF_CHANGED", "WIRE", "error", _BF,
        "multipleOf changed to a step that neither divides nor is divided by the old one.")
    LENGTH_BOUND_TIGHTENED = ("LENGTH_BOUND_TIGHTENED", "WIRE", "error", _B,
        "A length bound (min/maxLength, min/maxItems, min/maxProperties) now rejects what old "
        "writers write.")
    LENGTH_BOUND_LOOSENED = ("LENGTH_BOUND_LOOSENED", "WIRE", "error", _F,
        "A length bound (min/maxLength, min/maxItems, min/maxProperties) now allows what old "
        "readers reject.")
    PATTERN_ADDED = ("PATTERN_ADDED", "WIRE", "error", _B, "A string pattern was added.")
    PATTERN_REMOVED = ("PATTERN_REMOVED", "WIRE", "error", _F, "A string pattern was removed.")
    PATTERN_CHANGED = ("PATTERN_CHANGED", "WIRE", "error", _BF, "A string pattern changed.")
    UNIQUE_ITEMS_ADDED = ("UNIQUE_ITEMS_ADDED", "WIRE", "error", _B, "uniqueItems was switched on.")
    UNIQUE_ITEMS_REMOVED = ("UNIQUE_ITEMS_REMOVED", "WIRE", "error", _F, "uniqueItems was switched off.")
    # Content model
    ADDITIONAL_PROPERTIES_CLOSED = ("ADDITIONAL_PROPERTIES_CLOSED", "POLICY", "error", _B,
        "An object no longer accepts every unknown member (false, or a schema they must match): "
        "readers must ignore them (READ_IGNORE_UNKNOWN), so blobs of later writers break.")
    ADDITIONAL_PROPERTIES_OPENED = ("ADDITIONAL_PROPERTIES_OPENED", "WIRE", "info", _NONE,
        "An object now accepts unknown members, as READ_IGNORE_UNKNOWN asks.")
    # Annotations
    ANNOTATION_CHANGED = ("ANNOTATION_CHANGED", "ANNOTATION", "info", _NONE,
        "Only an annotation changed (description, title, examples, x-rule, ...): no blob is "
        "affected.")
    EQUIVALENT_REWRITE = ("EQUIVALENT_REWRITE", "ANNOTATION", "info", _NONE,
        "A keyword was rewritten into a provably equivalent form (a reordered character class, an"
        " integer bound as its exclusive neighbour): no blob is affected.")
    ADDED_IN_MISSING = ("ADDED_IN_MISSING", "ANNOTATION", "error", _NONE,
        "A property has no x-added-in annotation: every member must name the version that added "
        "it.")
    ADDED_IN_MISMATCH = ("ADDED_IN_MISMATCH", "ANNOTATION", "error", _NONE,
        "A new property's x-added-in is not the version of the document that adds it.")
    ADDED_IN_CHANGED = ("ADDED_IN_CHANGED", "ANNOTATION", "error", _NONE,
        "An existing property's x-added-in changed: released history is rewritten.")
    # Releases and versions
    RELEASED_FILE_MODIFIED = ("RELEASED_FILE_MODIFIED", "RELEASE", "error", _NONE,
        "A released schema file (or its index entry) changed: released files never change.")
    RELEASED_FILE_REMOVED = ("RELEASED_FILE_REMOVED", "RELEASE", "error", _NONE,
        "A released schema file was removed.")
    VERSION_NOT_NEWER = ("VERSION_NOT_NEWER", "RELEASE", "error", _NONE,
        "A candidate's version is not newer than every released version of its document.")
    VERSION_STAMP_MISMATCH = ("VERSION_STAMP_MISMATCH", "RELEASE", "error", _NONE,
        "A schema file's name, x-spec-version and $id do not name the same version.")
    RELEASE_ENTRY_MISMATCH = ("RELEASE_ENTRY_MISMATCH", "RELEASE", "error", _NONE,
        "A new index entry disagrees with its file (sha256, path, version stamps) or is not "
        "MAJOR.MINOR.PATCH.",
        "write the entry the finding names into schema/index.json (its sha256, path or stamps): a "
        "baseline entry would leave the index disagreeing with what it locks, and the next change "
        "would fail on it.")
    DOCUMENT_UNKNOWN = ("DOCUMENT_UNKNOWN", "RELEASE", "error", _NONE,
        "A new folder of schema files under schema/ that no index names: the gate cannot check "
        "it.")
    MAJOR_WITHOUT_NEW_WIRE_ID = ("MAJOR_WITHOUT_NEW_WIRE_ID", "RELEASE", "error", _NONE,
        "A new major version keeps the on-wire schema id of the old one.")
    MAJOR_VERSION_BREAK = ("MAJOR_VERSION_BREAK", "RELEASE", "info", _NONE,
        "A breaking change across a major version boundary: allowed (with a new wire id).")
    # SPEC.md's rules (gate/_spec.py): a released version's rules never change
    SPEC_RULE_ADDED = ("SPEC_RULE_ADDED", "SPEC", "error", _B,
        "A SPEC.md rule now applies to a version it did not: blobs old writers wrote may break "
        "it.")
    SPEC_RULE_ADDED_WITH_MEMBER = ("SPEC_RULE_ADDED_WITH_MEMBER", "SPEC", "info", _NONE,
        "A new version's SPEC.md rule about a member that version adds, naming none that old "
        "blobs carry: no blob of an old writer carries it.")
    SPEC_RULE_ADDED_FOR_WRITERS = ("SPEC_RULE_ADDED_FOR_WRITERS", "SPEC", "info", _NONE,
        "A new version's SPEC.md rule, or paragraph, that only tells that version's writers what "
        "they SHOULD or MAY do (its row, or each rule it names, binds the writer alone): no reader "
        "rejects a blob for it, so no released reader or writer breaks.")
    SPEC_RULE_REMOVED = ("SPEC_RULE_REMOVED", "SPEC", "error", _F,
        "A SPEC.md rule no longer applies to a version: new writers may write what old readers "
        "reject.")
    SPEC_RULE_STRENGTHENED = ("SPEC_RULE_STRENGTHENED", "SPEC", "error", _B,
        "A SPEC.md rule (or dtype size) is stronger (MAY -> SHOULD -> MUST, a dtype listed): what"
        " old writers wrote may now be rejected.")
    SPEC_RULE_WEAKENED = ("SPEC_RULE_WEAKENED", "SPEC", "error", _F,
        "A SPEC.md rule (or dtype size) is weaker (MUST -> SHOULD -> MAY, a dtype dropped): new "
        "writers may write what old readers reject.")
    SPEC_RULE_CHANGED = ("SPEC_RULE_CHANGED", "SPEC", "error", _BF,
        "A SPEC.md rule's terms, numbers, keywords or section (or a limit's duties or tiers) "
        "changed in a way the gate cannot order: breaking until reviewed.")
    SPEC_RULE_POINTER_CHANGED = ("SPEC_RULE_POINTER_CHANGED", "SPEC", "error", _NONE,
        "The pointer a SPEC.md rule names changed: readers of the version name another value "
        "(rule IDs and their pointers are stable).")
    SPEC_RULE_REWORDED = ("SPEC_RULE_REWORDED", "SPEC", "error", _NONE,
        "Only the wording of a released SPEC.md rule or limit changed (its keywords, terms, "
        "numbers and pointer kept): released text is locked; an editorial change passes only "
        "through a baseline entry.")
    SPEC_TEXT_CHANGED = ("SPEC_TEXT_CHANGED", "SPEC", "error", _NONE,
        "The text of a released version in SPEC.md changed (prose, a step, a table row): "
        "implementations are judged by it, so released text never changes; an editorial change "
        "passes only through a baseline entry.")
    SPEC_TEXT_ADDED = ("SPEC_TEXT_ADDED", "SPEC", "info", _NONE,
        "A new version's own SPEC.md text (a block stamped with that version) stating no RFC 2119"
        " keyword: no released version's text changed.")
    SPEC_LIMIT_TIGHTENED = ("SPEC_LIMIT_TIGHTENED", "SPEC", "error", _B,
        "A SPEC.md limit was lowered: a blob between the new and the old limit, which old writers"
        " may write, is now rejected.")
    SPEC_LIMIT_LOOSENED = ("SPEC_LIMIT_LOOSENED", "SPEC", "error", _F,
        "A SPEC.md limit was raised (for a released version, or for a new one over its line's): "
        "writers may now write more than released readers are held to read.")
    SPEC_LIMIT_ADDED = ("SPEC_LIMIT_ADDED", "SPEC", "error", _B,
        "A SPEC.md limit now applies to a version it did not: blobs old writers wrote may exceed "
        "it.")
    SPEC_LIMIT_REMOVED = ("SPEC_LIMIT_REMOVED", "SPEC", "error", _F,
        "A SPEC.md limit no longer applies to a version: new writers may write what old readers "
        "reject.")
    # The gate itself
    UNCLASSIFIED_CHANGE = ("UNCLASSIFIED_CHANGE", "GATE", "error", _BF,
        "A keyword the gate does not model changed (allOf, anyOf, if, ...): breaking until "
        "reviewed.")
    BASELINE_STALE = ("BASELINE_STALE", "BASELINE", "error", _NONE,
        "A baseline entry matches no finding: remove it.")
    BASELINE_EXPIRED = ("BASELINE_EXPIRED", "BASELINE", "error", _NONE, "A baseline entry has expired.")
    MATRIX_DISAGREES = ("MATRIX_DISAGREES", "GATE", "error", _NONE,
        "The rule-based verdict and the runtime compat matrix disagree.")
    # fmt: on


RULES: dict[str, Rule] = {member.id: member for member in Rule}


def rule(rule_id: str) -> Rule:
    """The catalogue entry of ``rule_id`` (KeyError for an unknown ID)."""
    return RULES[rule_id]
