"""The integer graph's CPU paths (issue 32): speed on this machine and closeness to the float path.

    .venv/bin/python bench/cpu_paths_bench.py                 # this CPU, 120 memory bodies
    .venv/bin/python bench/cpu_paths_bench.py --qemu 20       # + the same under qemu -cpu Haswell-noTSX

Options measured (all per-row activation quantisation, the product's graph):

- ``u8s8``: int8 weights as published; onnxruntime's u8×s8 kernel. Exact where the CPU has VNNI
  or a dot product; saturates on AVX2 (``vpmaddubsw``).
- ``u8u8``: the same weights stored as uint8 + 128 with a zero point of 128 (the u8×u8 kernel,
  exact everywhere): what a CPU whose u8×s8 kernel saturates runs.
- ``u8s8-7bit``: activations quantised to 7 bits (0..127), which cannot saturate a 16-bit pair
  sum: the alternative the issue names (not shipped: it halves activation precision).
- ``float``: the published file as onnxruntime runs it (dequantised weights, float kernels).

Reports, per option, the best of ``--repeat`` timings of embedding the texts (one thread and two),
and the cosine of each vector to the float path's (min / mean). With ``--qemu N`` the first N
texts are also embedded under ``qemu-x86_64 -cpu Haswell-noTSX`` (an AVX2 CPU without AVX-512 or
VNNI; emulated, so its timings mean nothing) with the product's default (``kernel="auto"``) and
with u8×s8 forced, and compared with this machine's default vectors.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ccmemory.retrieval import embed as E  # noqa: E402
from ccmemory.retrieval import int8graph  # noqa: E402


def texts(n: int) -> list[str]:
    root = ROOT / "bench" / "memories" / "blind" / "ccmemory"
    out = []
    for path in sorted(root.glob("*/*.md"))[:n]:
        body = path.read_text(encoding="utf-8").split("---", 2)[2]
        out.append(" ".join(body.split())[:600])
    return out


def seven_bit_graph(directory: Path) -> Path:
    """The u8×s8 graph with activations quantised to 0..127 instead of 0..255."""
    import onnx
    from onnx import numpy_helper

    data, _ = int8graph.rewrite(E.default_model_path())
    model = onnx.load_from_string(data)
    changed = 0
    for node in model.graph.node:
        if node.op_type == "Constant" and node.output[0].endswith("/c/q"):
            node.attribute[0].t.CopyFrom(numpy_helper.from_array(np.array(127.0, dtype=np.float32), "v"))
            changed += 1
    assert changed, "no activation range constant found"
    path = directory / "seven-bit.onnx"
    path.write_bytes(model.SerializeToString())
    return path


def model_for(option: str, threads: int, seven: Path) -> E.LocalMiniLM:
    if option == "float":
        return E.LocalMiniLM(integer=False, threads=threads)
    if option == "u8s8-7bit":
        m = E.LocalMiniLM(kernel="u8s8", threads=threads)
        m._open_integer = lambda start, _path: start(seven)  # type: ignore[method-assign]
        return m
    return E.LocalMiniLM(kernel=option, threads=threads)  # type: ignore[arg-type]


def timed(model: E.LocalMiniLM, corpus: list[str], repeat: int) -> tuple[float, np.ndarray]:
    model.load()
    model.embed(corpus[:4])  # warm-up
    best, vectors = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        vectors = model.embed(corpus)
        best = min(best, time.perf_counter() - start)
    assert vectors is not None
    return best, vectors


QEMU_CODE = (
    "import json, sys, numpy as np; from ccmemory.retrieval.embed import LocalMiniLM; "
    "m = LocalMiniLM(threads=1, kernel=sys.argv[3]); v = m.embed(json.load(open(sys.argv[1]))); "
    "np.save(sys.argv[2], v); print(m.kernel)"
)


def under_qemu(corpus: list[str], kernel: str, work: Path) -> tuple[str, np.ndarray]:
    (work / "texts.json").write_text(json.dumps(corpus))
    out = work / f"qemu-{kernel}.npy"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CCMEMORY_CACHE_DIR": str(work / "cache")}
    proc = subprocess.run(
        [
            "qemu-x86_64",
            "-cpu",
            "Haswell-noTSX",
            sys.executable,
            "-c",
            QEMU_CODE,
            str(work / "texts.json"),
            str(out),
            kernel,
        ],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return proc.stdout.strip(), np.load(out)


def _chosen() -> str:
    model = E.LocalMiniLM()
    model.load()
    return model.kernel


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=120)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--qemu", type=int, default=0, help="also embed this many texts under qemu Haswell")
    args = parser.parse_args()
    corpus = texts(args.n)
    print(
        f"{len(corpus)} texts; load average {os.getloadavg()[0]:.2f}; kernel chosen here: {_chosen()}",
        file=sys.stderr,
    )
    with tempfile.TemporaryDirectory() as tmp:
        seven = seven_bit_graph(Path(tmp))
        results: dict[str, dict[str, object]] = {}
        reference = None
        for option in ("float", "u8s8", "u8u8", "u8s8-7bit"):
            row: dict[str, object] = {}
            for threads in (1, 2):
                seconds, vectors = timed(model_for(option, threads, seven), corpus, args.repeat)
                row[f"{threads} thread(s) s"] = round(seconds, 3)
            if option == "float":
                reference = vectors
            assert reference is not None
            cos = (vectors * reference).sum(axis=1)
            row["cosine to float min"] = round(float(cos.min()), 5)
            row["cosine to float mean"] = round(float(cos.mean()), 5)
            results[option] = row
            print(option, row, file=sys.stderr)
        print(f"load average after: {os.getloadavg()[0]:.2f}", file=sys.stderr)
        if args.qemu:
            native = E.LocalMiniLM(threads=1)
            base = native.embed(corpus[: args.qemu])
            for kernel in ("auto", "u8s8"):
                chosen, emulated = under_qemu(corpus[: args.qemu], kernel, Path(tmp))
                cos = (base * emulated).sum(axis=1)
                results[f"qemu Haswell {kernel}"] = {
                    "kernel": chosen,
                    "vs this CPU's default: cosine min": round(float(cos.min()), 7),
                    "max abs difference": float(np.abs(base - emulated).max()),
                    "this CPU's kernel": native.kernel,
                }
                print(kernel, results[f"qemu Haswell {kernel}"], file=sys.stderr)
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
