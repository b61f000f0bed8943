"""Onboarding: a new project's files (``roofgen init``) and new spec files
(``roofgen new case``), generated from the schemas so they never drift from them."""
