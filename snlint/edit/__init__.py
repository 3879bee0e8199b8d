"""Editing source with libcst, for the rules' fixes; nothing here knows about rules or
resolves a name."""
