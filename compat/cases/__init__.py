"""The cases: what the kit sends a testee, built from the registry's schemas.

Each module builds one family of cases or the values they are made of: the forms a schema
takes (``_forms``), the generated payloads and their identities (``_cases``), realistic
magnitudes (``_magnitudes``), the refusal cases of each rule (``_built_cases``,
``_refusals``), digests (``_digest``), later members a reader must keep (``_write_unknown``), merges (``_merge``),
the size sweep (``_sizes``) and JSON text a parser may read wrongly (``_json_text``).
They sit on the results and the protocol (``refitwire.compat._results``, ``_protocol``) and
below the runner: nothing here runs a testee.
"""
