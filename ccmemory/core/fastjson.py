"""JSON for the hook fast path without importing the `json` package.

`import json` pulls in `re` (and with it enum, functools, collections): on a busy machine that
alone costs as much as starting Python. The C accelerator `_json` does the real work for `json`
anyway, so the hooks call it directly. Any surprise (another interpreter, a changed signature)
falls back to the `json` package: correctness first, speed second.
"""

from __future__ import annotations

from ccmemory.core.errors import CcmemoryError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_NAN = float("nan")
_CONSTANTS = {"NaN": _NAN, "Infinity": float("inf"), "-Infinity": float("-inf")}


class _Ctx:
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = _CONSTANTS.__getitem__


def _no_default(obj: object) -> object:
    raise TypeError(f"{type(obj).__name__} is not JSON serializable")


try:
    import _json

    _c: Any = _json
    _scanner: Any = _c.make_scanner(_Ctx())
    _encoder: Any = _c.make_encoder(
        None, _no_default, _c.encode_basestring, None, ":", ",", False, False, True
    )
except Exception:  # pragma: no cover - non-CPython
    _scanner = None
    _encoder = None


class DecodeError(CcmemoryError, ValueError):
    pass


_WS = " \t\n\r"


def loads(text: str) -> Any:
    if _scanner is None:
        import json

        return json.loads(text)
    start = len(text) - len(text.lstrip(_WS))
    try:
        obj, end = _scanner(text, start)
    except StopIteration:
        raise DecodeError("not JSON") from None
    except ValueError as exc:  # json.JSONDecodeError from the C scanner
        raise DecodeError(str(exc)) from None
    except SystemError:
        # the C scanner reports a bad string (control character, bad escape) through
        # json.decoder.JSONDecodeError; when `json` was never imported it returns NULL with no
        # exception instead. Let the `json` package say what is wrong (a slow path, errors only).
        import json

        try:
            return json.loads(text)
        except ValueError as exc:
            raise DecodeError(str(exc)) from None
    if text[end:].strip(_WS):
        raise DecodeError("extra data after the JSON value")
    return obj


def dumps(obj: Any) -> str:
    """Compact JSON, non-ASCII kept (like json.dumps(ensure_ascii=False, separators=(',', ':')))."""
    if _encoder is not None:
        try:
            return "".join(_encoder(obj, 0))
        except TypeError:
            pass
    import json

    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=str)
