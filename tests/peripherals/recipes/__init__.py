"""Adapters written by following the package READMEs, for tests only."""
