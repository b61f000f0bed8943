"""Reports of an analysis for people and scripts: text, JSON, tables, explain."""
