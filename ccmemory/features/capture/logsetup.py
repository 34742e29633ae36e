"""Logging that can never leak a secret: every formatted record goes through `redact`."""

from __future__ import annotations

import logging

from ccmemory.core.redact import redact


class RedactingFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))
