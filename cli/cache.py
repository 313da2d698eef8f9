"""List the kit's caches and their size on disk, or remove them (prune).

``refitwire cache`` prints one line per cache (its name, size, folder and what it holds) and
the total; ``--json`` prints the same as one JSON object. ``refitwire cache prune NAME...``
removes the named caches, ``--all`` every one, ``--dry-run`` says what would go. Everything
there is made again when next needed: the size cases' tables by the next run with size cases,
the upstream environments by ``python -m refitwire.compat.upstream.envs`` (or ``tox -e
matrix``, or a run that needs them). Only what the kit made is removed (in an environment
folder, its ``modelexpress-*`` entries; never the folder ``$REFITWIRE_ENVS`` names), and an
environment being built by another process is left, said so, with exit 1. Do not prune while
a run that uses a cache is going on. The folders follow ``$XDG_CACHE_HOME`` and
``$REFITWIRE_ENVS``.
"""

from __future__ import annotations

import argparse
import json
import sys

from refitwire.compat import Cache, caches, disk_size, prune_caches
from refitwire.wire import Registry


def add_arguments(parser: argparse.ArgumentParser, registry: Registry) -> None:
    parser.add_argument("--json", action="store_true", help="print the caches as one JSON object")
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    pruning = actions.add_parser("prune", help="remove the named caches (--all: every one)")
    pruning.add_argument("names", nargs="*", metavar="NAME", help="a cache's name as the list shows it")
    pruning.add_argument("--all", action="store_true", help="remove every cache")
    pruning.add_argument("--dry-run", action="store_true", help="say what would be removed, remove nothing")
    pruning.set_defaults(parser=pruning)


def run(args: argparse.Namespace) -> int:
    found = caches()
    if args.action != "prune":
        return _show(found, as_json=args.json)
    by_name = {cache.name: cache for cache in found}
    unknown = [name for name in args.names if name not in by_name]
    if unknown or bool(args.names) == args.all:
        why = (
            f"no cache named {', '.join(unknown)}"
            if unknown
            else "name the caches to remove, or give --all"
            if not args.all
            else "give --all or names, not both"
        )
        args.parser.error(f"{why} (caches: {', '.join(by_name)})")
    chosen = found if args.all else [by_name[name] for name in dict.fromkeys(args.names)]
    done = prune_caches(chosen, dry_run=args.dry_run)
    verb = "would remove" if args.dry_run else "removed"
    for path in done.removed:
        print(f"{verb} {path}")
    for path, why in done.kept:
        print(f"kept {path}: {why}", file=sys.stderr)
    print(f"{verb} {len(done.removed)} entr{'y' if len(done.removed) == 1 else 'ies'}, {human(done.freed)}")
    return 1 if done.kept else 0


def _show(found: list[Cache], *, as_json: bool) -> int:
    sizes = {cache.name: cache.size for cache in found}
    total = disk_size([entry for cache in found for entry in cache.entries])
    if as_json:
        listed = [
            {
                "name": cache.name,
                "what": cache.what,
                "folders": [str(folder) for folder in cache.folders],
                "entries": [str(entry) for entry in cache.entries],
                "bytes": sizes[cache.name],
            }
            for cache in found
        ]
        print(json.dumps({"caches": listed, "bytes": total}, indent=1))
        return 0
    width = max(len(cache.name) for cache in found)
    for cache in found:
        where = " ".join(str(folder) for folder in cache.folders)
        print(f"{cache.name:<{width}}  {human(sizes[cache.name]):>9}  {where}  ({cache.what})")
    print(f"{'total':<{width}}  {human(total):>9}")
    return 0


def human(size: int) -> str:
    """A size in binary units to three digits: '0 B', '40.0 KiB', '266 MiB', '2.54 GiB'."""
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            break
        value /= 1024
    if unit == "B":
        return f"{size} B"
    return (
        f"{value:.0f} {unit}"
        if value >= 100
        else f"{value:.1f} {unit}"
        if value >= 10
        else f"{value:.2f} {unit}"
    )
