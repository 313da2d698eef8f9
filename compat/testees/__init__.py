"""Example and adapter testees speaking the conformance protocol."""
