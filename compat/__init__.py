"""The compat matrix and conformance suite: testees, the protocol runner, reports."""
