"""Who takes part in the matrix: declared here, narrowed by what each one says it can do."""

from __future__ import annotations

import shlex
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path

from refitwire.wire import Registry


@dataclass(frozen=True)
class Participant:
    """A testee command with a short label for the matrix."""

    label: str
    command: tuple[str, ...]
    #: "reference", "candidate", "generation", "upstream", "upstream-source", "example", "third-party"
    kind: str
    # The part of ``label`` that stands in until the start reply names the implementation: it is
    # then replaced by ``name@version`` from that reply (a testee's command says nothing reliable:
    # ``env VAR=1 ./t`` would be "env").
    provisional: str = ""

    def named(self, name: str, version: str) -> Participant:
        """This participant labelled by what its start reply says it is."""
        if not self.provisional:
            return self
        return replace(
            self, label=self.label.replace(self.provisional, f"{name}@{version}", 1), provisional=""
        )


def reference(registry: Registry) -> list[Participant]:
    return [
        Participant(
            f"reference@{v}",
            (sys.executable, "-m", "refitwire.compat.testees.reference", "--spec-version", v),
            "reference",
        )
        for v in registry.released_versions()
    ]


def candidates(schema_dir: Path, registry: Registry) -> list[Participant]:
    """The reference speaking each unreleased version found in ``schema_dir`` (the gate's candidate)."""
    from refitwire.compat.runner._candidate import candidate_versions

    command = (
        sys.executable,
        "-m",
        "refitwire.compat.testees.reference",
        "--schema-dir",
        str(schema_dir),
        "--spec-version",
    )
    return [
        Participant(f"candidate@{v}", (*command, v), "candidate")
        for v in candidate_versions(schema_dir, registry)
    ]


def generations(registry: Registry) -> tuple[list[Participant], list[str]]:
    """The frozen generation of every released version, and a line for each one that has none
    (a release without its generation is said, never silently left out of the matrix)."""
    # The package's real folder: an editable install links each file, and one added after
    # installing would be missing from the links.
    folder = Path(str(resources.files("refitwire.compat.generations")), "__init__.py").resolve().parent
    found, missing = [], []
    for v in registry.released_versions():
        script = folder / f"gen_{v.replace('.', '_')}.py"
        if script.exists():
            found.append(Participant(f"generation@{v}", (sys.executable, str(script)), "generation"))
        else:
            missing.append(f"generation@{v}: no frozen generation {script.name} (compat/generations/)")
    return found, missing


def upstream(build: bool = False) -> tuple[list[Participant], list[str]]:
    """The released modelexpress readers and writers, each in its own environment."""
    from refitwire.compat.upstream import ADAPTER_SCRIPT
    from refitwire.compat.upstream.envs import UPSTREAM_VERSIONS, ensure_env, find_env

    found, missing = [], []
    for version in UPSTREAM_VERSIONS:
        python = ensure_env(version) if build else find_env(version)
        if python is None:
            missing.append(
                f"modelexpress {version}: environment not built (python -m refitwire.compat.upstream.envs)"
            )
            continue
        found.append(Participant(f"modelexpress@{version}", (str(python), str(ADAPTER_SCRIPT)), "upstream"))
    return found, missing


def upstream_source(
    path: Path,
    log: Callable[[str], None] | None = None,
    spec_version: str | None = None,
    schema_dir: Path | None = None,
    *,
    registry: Registry,
) -> Participant:
    """A ModelExpress source tree's own reader and writer (its environment is built when missing).

    It declares ``spec_version`` (what the pull request implements), else the newest candidate
    of ``schema_dir``, else what the released trees implement; the members that version adds
    beyond the newest release are handed to the tree's writer and read back (``--member``).
    ValueError (one line) when ``path`` is no such tree or the version is unknown; EnvBuildError
    when its environment fails."""
    from refitwire.compat.upstream import ADAPTER_SCRIPT
    from refitwire.compat.upstream.envs import IMPORT_REQUIREMENTS, UPSTREAM_VERSIONS, ensure_source_env
    from refitwire.compat.upstream.source import locate

    tree = locate(path, IMPORT_REQUIREMENTS, released=UPSTREAM_VERSIONS, log=log)
    python = ensure_source_env(tree.requirements, tree.root, log=log)
    command = (str(python), str(ADAPTER_SCRIPT), "--source", str(tree.root), "--version", tree.version)
    return Participant(tree.label, command + _declared(spec_version, schema_dir, registry), "upstream-source")


def _declared(spec_version: str | None, schema_dir: Path | None, registry: Registry) -> tuple[str, ...]:
    """The adapter's ``--spec-version`` and ``--member`` flags for a source tree."""
    if spec_version is None and schema_dir is not None:
        from refitwire.compat.runner._candidate import candidate_versions

        found = candidate_versions(schema_dir, registry)
        spec_version = found[-1] if found else None
    if spec_version is None or spec_version in registry.released_versions():
        return ("--spec-version", spec_version) if spec_version else ()
    if schema_dir is None:
        raise ValueError(f"declares spec version {spec_version!r}, a candidate: it needs --schema-dir")
    from refitwire.compat.runner._candidate import load, with_candidates
    from refitwire.wire import version_key

    model = load(
        with_candidates(schema_dir, registry), spec_version
    ).model  # UnknownVersion (a ValueError) names the known ones
    newest = version_key(registry.released_versions()[-1])
    flags = ["--spec-version", spec_version]
    for member in model.members():
        if member.name != "*" and version_key(member.added_in) > newest:
            flags += ["--member", f"{'.'.join(member.level)}:{member.name}"]
    return tuple(flags)


def javascript() -> tuple[list[Participant], list[str]]:
    script = Path(str(resources.files("refitwire.compat.testees"))) / "js" / "testee.js"
    node = shutil.which("node")
    if not script.exists() or node is None:
        return [], ["javascript example: node or the script is missing"]
    return [Participant("javascript", (node, str(script)), "example")], []


_INTERPRETERS = ("python", "node", "deno", "bun", "ruby", "java", "perl", "php", "sh", "bash")


def third_party(command: str) -> Participant:
    """A testee command. Until it answers ``start`` its label names the program (the script, when
    run by an interpreter); from then on, the implementation its start reply names (``name@version``)."""
    argv = tuple(shlex.split(command))
    if not argv:
        return Participant(command, argv, "third-party")
    words = [Path(argv[0]).name]
    if words[0].startswith(_INTERPRETERS) and len(argv) > 1 and not argv[1].startswith("-"):
        words.append(Path(argv[1]).name)
    label = " ".join(words)
    return Participant(label, argv, "third-party", provisional=label)
