"""The wire-change gate: classify schema changes, lock released versions, prove each verdict."""
