"""Entry points kept for git hooks installed by earlier versions (``python -m
ccmemory.lifecycle.background`` / ``.precommit``); ``ccmemory init`` installs hooks that call
:mod:`ccmemory.features.lifecycle` directly."""
