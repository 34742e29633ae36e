"""``python -m ccmemory.lifecycle.precommit ROOT`` for git hooks installed by earlier versions."""

if __name__ == "__main__":
    import runpy

    runpy.run_module("ccmemory.features.lifecycle.precommit", run_name="__main__", alter_sys=True)
