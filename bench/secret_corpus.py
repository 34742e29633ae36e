"""The secret corpus (tests/secret_corpus.py) through redact(): kinds caught, leaked, near misses
changed. With ``--rev REV`` the redact.py of that git revision is measured instead (before/after).

    .venv/bin/python bench/secret_corpus.py
    .venv/bin/python bench/secret_corpus.py --rev 6d1b01f
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.secret_corpus import CORPUS  # noqa: E402
from tests.test_redact_corpus import surviving  # noqa: E402


def load_redact(rev: str | None):  # type: ignore[no-untyped-def]
    if rev is None:
        from ccmemory.core import redact

        return redact.redact
    for path in ("ccmemory/core/redact.py", "ccmemory/redact.py"):
        proc = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, capture_output=True, text=True)
        if proc.returncode == 0:
            break
    else:
        raise SystemExit(f"no redact.py at {rev}")
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
        fh.write(proc.stdout)
    spec = importlib.util.spec_from_file_location("old_redact", fh.name)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.redact


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rev")
    args = ap.parse_args()
    redact = load_redact(args.rev)
    leaked = [kind for kind, text, secret, _near in CORPUS if surviving(secret, redact(text))]
    changed = [kind for kind, _t, _s, near in CORPUS if redact(near) != near]
    print(
        f"{len(CORPUS)} kinds: {len(CORPUS) - len(leaked)} caught, {len(leaked)} leaked, "
        f"{len(changed)} near misses changed"
    )
    for kind in leaked:
        print(f"  leaked: {kind}")
    for kind in changed:
        print(f"  near miss changed: {kind}")


if __name__ == "__main__":
    main()
