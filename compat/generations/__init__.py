"""Frozen generations: stdlib-only testees, one per released spec version, locked by hash."""
