"""Spec files: loading with positions, schema validation, units, references."""
