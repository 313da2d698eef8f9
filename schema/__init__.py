"""Package data: the normative JSON Schemas, SPEC.md and golden vectors (see schema/SPEC.md)."""
