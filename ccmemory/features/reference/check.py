"""`ccmemory check` for the reference tree: unreadable files, bad frontmatter, memory keys in a
reference file, secrets, and relative links to markdown files that do not exist."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ccmemory.app.refsync import scan
from ccmemory.core.reftree.record import load

if TYPE_CHECKING:
    from ccmemory.core.vault import Vault
    from ccmemory.features.findings import Finding


def reference_findings(vault: Vault) -> list[Finding]:
    from ccmemory.core.redact import find_secrets
    from ccmemory.features.findings import Finding

    files, skipped = scan(vault)
    out = [Finding(rel, 1, "error", reason) for rel, reason in skipped.items()]
    for rel, (path, mtime, size) in sorted(files.items()):
        rec = load(path, rel, mtime, size)
        if rec.error:
            out.append(Finding(rel, rec.error_line or 1, "error", rec.error))
            continue
        out += [Finding(rel, line, "warning", msg) for line, msg in rec.warnings]
        text = "\n".join(c.text for c in rec.chunks)
        kinds = sorted({f.kind for f in find_secrets(text) if f.kind != "private"})
        if kinds:
            out.append(Finding(rel, 1, "error", f"possible secret in a reference file ({', '.join(kinds)})"))
        for cid, target, _frag in rec.links:
            if not os.path.isfile(os.path.join(str(vault.root), target)):
                out.append(
                    Finding(rel, 1, "warning", f"section {cid.split('#', 1)[1]} links to missing {target}")
                )
    return out
