"""Public entry point of the Claude Code hooks: ``python -c 'from ccmemory.hook import main'``
(plugin/scripts/hook.sh; copies of the plugin installed before the package moved its modules).
The handlers live in :mod:`ccmemory.surfaces.hooks`."""

from ccmemory.surfaces.hooks import main

__all__ = ["main"]

if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
