"""``python -m ccmemory.lifecycle.background ROOT`` for git hooks installed by earlier versions."""

if __name__ == "__main__":
    import runpy

    runpy.run_module("ccmemory.features.lifecycle.background", run_name="__main__", alter_sys=True)
