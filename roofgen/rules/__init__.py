"""Plausibility rules shipped as data."""
