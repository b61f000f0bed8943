"""Reviewing a change: the diff of two sets of specs and its report."""
