"""Secret redaction shared by capture, MCP, check and logging.

`redact(text)` replaces every secret with a `[REDACTED:<kind>]` marker and removes
`<private>…</private>` sections entirely. `find_secrets(text)` reports what it found (kind and
span, never the value in clear). Only `re` is imported: hooks call this on every tool event.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from typing import TypeVar

    M = TypeVar("M")

__all__ = ["Finding", "find_secrets", "redact", "redact_memory", "redact_obj"]


class Finding:
    """One secret span. (A plain class: `dataclasses` costs ~10 ms of import on the hook path.)"""

    __slots__ = ("end", "kind", "start")

    def __init__(self, kind: str, start: int, end: int):
        self.kind = kind
        self.start = start
        self.end = end

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Finding) and (self.kind, self.start, self.end) == (
            other.kind,
            other.start,
            other.end,
        )

    def __hash__(self) -> int:
        return hash((self.kind, self.start, self.end))

    def __repr__(self) -> str:
        return f"Finding({self.kind!r}, {self.start}, {self.end})"

    def preview(self, text: str) -> str:
        """First 4 characters of the secret and its length: enough to find it, not to use it."""
        value = text[self.start : self.end]
        return f"{value[:4]}…({len(value)} chars)"


# Private sections go first: they are removed, not marked, and may span lines. An unclosed
# <private> removes everything after it (fail closed).
_PRIVATE_SRC = r"<private>.*?(?:</private>|\Z)"

# A secret-named variable: the name ENDS with one of these words (so `max_tokens`, `author`,
# `password_policy` are not secret names, while `DB_PASSWORD`, `githubToken`, `api-key` are).
_SECRET_NAME = (
    r"[A-Za-z0-9_.-]*?(?:PASSWORD|PASSWD|PWD|SECRET|SECRET_?KEY|TOKEN|API_?KEY|APIKEY|API-KEY|"
    r"ACCESS_?KEY|PRIVATE_?KEY|CREDENTIALS?|SESSION_?KEY|SIGNING_?KEY|AUTH_?KEY|DSN|_AUTH|AUTHTOKEN)"
)

# A cheap pre-filter without any regex: text holding none of these markers (compared lower-case)
# cannot hold a secret any pattern below would find, so the patterns (slow to compile) are only
# built when needed. Hooks pay for `str.lower` and a few substring tests, nothing more.
_MARKERS = (
    "sk-",
    "akia",
    "asia",
    "agpa",
    "aida",
    "aroa",
    "anpa",
    "anva",
    "aipa",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "xox",
    "hooks.slack",
    "aiza",
    "sk_live_",
    "sk_test_",
    "rk_live_",
    "rk_test_",
    "eyj",
    "://",
    "pass",
    "pwd",
    "secret",
    "token",
    "key",
    "credential",
    "dsn",
    "bearer",
    "private",
    "npm_",
    "glpat-",
    "hf_",
    "pypi-",
    "authorization",
    "whsec_",
    "sg.",
    "shp",
    "do_v1_",
    "dop_v1",
    "doo_v1",
    "dor_v1",
    "dckr_pat",
    "_auth",
    '"auth"',
    ":aa",
    "hvs.",
    "atlasv1",
    "rubygems_",
    "machine",
    "x-api",
    "api-key",
    "-u",
    "--user",
    "-p",
)


def _maybe_secret(lower: str) -> bool:
    return any(marker in lower for marker in _MARKERS)


def _src(source: str, flags: int = 0) -> tuple[str, int]:
    return source, flags


#: patterns compiled when a text first needs them (by index in _SOURCES): compiling all 39 took
#: ~10 ms of every hook that redacts, and most texts hold the markers of a few kinds only
_COMPILED: dict[int, re.Pattern[str]] = {}
_HARMLESS: re.Pattern[str] | None = None
_PRIVATE: re.Pattern[str] | None = None


def _pattern(index: int) -> re.Pattern[str]:
    pattern = _COMPILED.get(index)
    if pattern is None:
        import re

        _, src, flags, _ = _SOURCES[index]
        pattern = _COMPILED[index] = re.compile(src, flags)
    return pattern


def _patterns() -> list[tuple[str, re.Pattern[str], int]]:
    """Every pattern, compiled: (kind, pattern, group)."""
    return [(kind, _pattern(i), group) for i, (kind, _, _, group) in enumerate(_SOURCES)]


def _harmless() -> re.Pattern[str]:
    global _HARMLESS
    if _HARMLESS is None:
        import re

        _HARMLESS = re.compile(_HARMLESS_SRC, re.IGNORECASE)
    return _HARMLESS


_DOTTED: re.Pattern[str] | None = None
#: Discord bot tokens: base64 of the bot's id (starts M, N or O), a timestamp, an HMAC.
_DOTTED_SRC = r"\b[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}(?![A-Za-z0-9_\-])"


def _dotted() -> re.Pattern[str]:
    global _DOTTED
    if _DOTTED is None:
        import re

        _DOTTED = re.compile(_DOTTED_SRC)
    return _DOTTED


def _private() -> re.Pattern[str]:
    global _PRIVATE
    if _PRIVATE is None:
        import re

        _PRIVATE = re.compile(_PRIVATE_SRC, re.IGNORECASE | re.DOTALL)
    return _PRIVATE


# (kind, pattern source, flags, group holding the secret: 0 = whole match)
_PATTERN_LIST: list[tuple[str, tuple[str, int], int]] = [
    (
        "private_key",
        _src(
            r"(?s)-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?"
            r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)",
        ),
        0,
    ),
    ("anthropic_key", _src(r"\bsk-ant-(?:api|admin|oat)\d{0,3}-[A-Za-z0-9_\-]{20,}"), 0),
    ("openai_key", _src(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"), 0),
    ("aws_access_key", _src(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b"), 0),
    (
        "aws_secret_key",
        _src(
            r"(?i)(aws_?secret_?(?:access_?)?key(?:_id)?|secret_?access_?key)"
            r"(\s*[:=]\s*|\"\s*:\s*\"|'\s*:\s*')[\"']?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"
        ),
        3,
    ),
    ("github_token", _src(r"\b(?:gh[pousr])_[A-Za-z0-9]{36,255}\b"), 0),
    ("github_token", _src(r"\bgithub_pat_[A-Za-z0-9_]{60,255}\b"), 0),
    ("slack_token", _src(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), 0),
    (
        "slack_webhook",
        _src(r"https://hooks\.slack\.com/services/T[A-Za-z0-9]+/B[A-Za-z0-9]+/[A-Za-z0-9]+"),
        0,
    ),
    ("google_api_key", _src(r"\bAIza[0-9A-Za-z_\-]{35}\b"), 0),
    ("stripe_key", _src(r"\b[sr]k_(?:live|test)_[0-9A-Za-z]{20,}\b"), 0),
    ("stripe_webhook_secret", _src(r"\bwhsec_[A-Za-z0-9]{20,}"), 0),
    ("sendgrid_key", _src(r"\bSG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}"), 0),
    ("shopify_token", _src(r"\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}\b"), 0),
    ("digitalocean_token", _src(r"\bdo[opr]_v1_[a-f0-9]{64}\b"), 0),
    ("docker_token", _src(r"\bdckr_pat_[A-Za-z0-9_\-]{20,}"), 0),
    ("telegram_bot_token", _src(r"(?<!\d)\d{8,10}:AA[A-Za-z0-9_\-]{32,34}(?![A-Za-z0-9_\-])"), 0),
    ("vault_token", _src(r"\bhvs\.[A-Za-z0-9_\-]{20,}"), 0),
    ("terraform_token", _src(r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-]{40,}"), 0),
    ("rubygems_key", _src(r"\brubygems_[a-f0-9]{48}\b"), 0),
    # Docker config.json: {"auths": {"registry": {"auth": "base64(user:password)"}}}
    ("docker_auth", _src(r"\"auth\"\s*:\s*\"([A-Za-z0-9+/=]{12,})\""), 1),
    # Authorization: token … / digest … / apikey … (GitHub's "token" scheme and the rest)
    (
        "auth_header",
        _src(
            r"(?i)\b(authorization\s*[:=]\s*[\"']?\s*(?:token|digest|apikey|api-key|key))\s+([A-Za-z0-9_\-.=~+/]{8,})"
        ),
        2,
    ),
    # X-API-Key: … and the other API-key headers
    (
        "api_key_header",
        _src(
            r"(?i)\b((?:x-)?(?:api-key|apikey|api-token|auth-token|access-token))\s*:\s*[\"']?([A-Za-z0-9_\-.=~+/]{8,})"
        ),
        2,
    ),
    # .netrc: `password X` on its own line, or `machine H login U password X` on one
    ("netrc_password", _src(r"(?im)^[ \t]*password[ \t]+(\S{4,256})[ \t]*$"), 1),
    ("netrc_password", _src(r"(?i)\bmachine\s+\S+(?:\s+login\s+\S+)?\s+password\s+(\S{4,256})"), 1),
    (
        "jwt",
        _src(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
        0,
    ),
    # scheme://user:password@host — keep user and host, hide the password
    (
        "url_password",
        _src(r"\b([a-zA-Z][a-zA-Z0-9+.\-]{1,30}://[^\s:/@\"'<>]{0,128}):([^\s@/\"'<>]{1,256})@"),
        2,
    ),
    # Password=...; in ADO/JDBC style connection strings
    (
        "connection_password",
        _src(
            r"(?i)\b(password|pwd|accountkey|sharedaccesskey|sharedsecret)\s*=\s*([^;\s\"']{1,256})(?=;|\s|\"|'|$)"
        ),
        2,
    ),
    ("bearer_token", _src(r"(?i)\b(bearer)\s+([A-Za-z0-9_\-.=~+/]{20,})"), 2),
    (
        "basic_auth",
        _src(r"(?i)\b(authorization\s*[:=]\s*[\"']?\s*basic)\s+([A-Za-z0-9+/=_\-]{8,})(?![=\"])"),
        2,
    ),
    ("npm_token", _src(r"\bnpm_[A-Za-z0-9]{36}\b"), 0),
    ("gitlab_token", _src(r"\bglpat-[A-Za-z0-9_\-]{20,}"), 0),
    ("huggingface_token", _src(r"\bhf_[A-Za-z0-9]{30,}\b"), 0),
    ("pypi_token", _src(r"\bpypi-AgE[A-Za-z0-9_\-]{50,}"), 0),
    # ?access_token=… / &api_key=… in a URL's query string
    (
        "url_query_secret",
        _src(
            r"(?i)[?&]((?:access|refresh|id|auth|api|private|session)?[_-]?token|api[_-]?key|apikey|key|"
            r"secret|client[_-]?secret|password|passwd|pwd|sig|signature|x-amz-signature|x-amz-credential)"
            r"=([^&;\s#\"'<>]{4,512})"
        ),
        2,
    ),
    # curl -u user:pass / --user user:pass (the user is kept)
    (
        "curl_user",
        _src(r"(?i)(?:^|[\s;|&(])(?:-u|--user)(?:\s+|=)[\"']?([^\s:\"']{1,128}):([^\s\"']{1,256})"),
        2,
    ),
    # mysql -pPASS (the password glued to -p), and --password=… / --password … on any command line
    (
        "cli_password",
        _src(
            r"(?i)\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b[^\n|;&]*?\s-p([^\s\"'-][^\s\"']{0,255})"
        ),
        1,
    ),
    ("cli_password", _src(r"(?i)(?:^|\s)--pass(?:word)?(?:=|\s+)(?!-)([^\s\"']{1,256})"), 1),
    # .env-style / shell / YAML / JSON assignment of a secret-named variable
    (
        "secret_assignment",
        _src(
            rf"(?im)(?:^|(?<=[\s;,{{(\"'`:]))(?:export\s+)?[\"']?({_SECRET_NAME})\b[\"']?"
            r"(\s*(?::=|=|:)\s*)(?!\[REDACTED)"
            r"(\"[^\"\n]{1,4096}\"|'[^'\n]{1,4096}'|[^\s\"',;}#()]{1,4096})",
        ),
        3,
    ),
]

# kinds whose value may be a placeholder or a code reference (checked against _HARMLESS)
_VARIABLE_KINDS = frozenset(
    {
        "secret_assignment",
        "connection_password",
        "url_query_secret",
        "curl_user",
        "cli_password",
        "basic_auth",
    }
)

_SOURCES = [(kind, src, flags, group) for kind, (src, flags), group in _PATTERN_LIST]

# Per kind: lower-case strings of which every match of the kind's patterns holds at least one
# (compared with the folded text, `_fold`), so a text holding none of them is not scanned with
# them. Each pattern costs a scan of the whole text, whatever it holds: the 39 scans of a 4 KB
# site page took ~3 ms, most of them for patterns whose fixed part the page does not hold. A kind
# not listed is always scanned for; tests/test_redact.py checks that every match of the corpus
# holds one of its kind's markers.
_NEEDS: dict[str, tuple[str, ...]] = {
    "private_key": ("-----begin ",),
    "anthropic_key": ("sk-ant-",),
    "openai_key": ("sk-",),
    "aws_access_key": ("akia", "asia", "agpa", "aida", "aroa", "anpa", "anva", "aipa"),
    "aws_secret_key": ("secret",),
    "github_token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    "slack_token": ("xox",),
    "slack_webhook": ("hooks.slack.com",),
    "google_api_key": ("aiza",),
    "stripe_key": ("k_live_", "k_test_"),
    "stripe_webhook_secret": ("whsec_",),
    "sendgrid_key": ("sg.",),
    "shopify_token": ("shp",),
    "digitalocean_token": ("_v1_",),
    "docker_token": ("dckr_pat_",),
    "telegram_bot_token": (":aa",),
    "vault_token": ("hvs.",),
    "terraform_token": (".atlasv1.",),
    "rubygems_key": ("rubygems_",),
    "docker_auth": ('"auth"',),
    "auth_header": ("authorization",),
    "api_key_header": ("api-key", "apikey", "api-token", "auth-token", "access-token"),
    "netrc_password": ("password",),
    "jwt": ("eyj",),
    "url_password": ("://",),
    "connection_password": ("password", "pwd", "accountkey", "sharedaccesskey", "sharedsecret"),
    "bearer_token": ("bearer",),
    "basic_auth": ("authorization",),
    "npm_token": ("npm_",),
    "gitlab_token": ("glpat-",),
    "huggingface_token": ("hf_",),
    "pypi_token": ("pypi-age",),
    "url_query_secret": ("token", "key", "secret", "passw", "pwd", "sig", "credential"),
    "curl_user": ("-u",),
    "cli_password": ("mysql", "mariadb", "--pass"),
    "secret_assignment": ("passw", "pwd", "secret", "token", "key", "credential", "dsn", "_auth"),
}
# the characters other than their own case forms that `re.IGNORECASE` matches to an ASCII letter
# (U+0130 and U+0131 to i, U+017F to s): folded before the markers are looked for
_FOLD = {0x130: "i", 0x131: "i", 0x17F: "s"}


def _fold(text: str) -> str:
    return text.lower() if text.isascii() else text.translate(_FOLD).lower()


# Values that are obviously not secrets (placeholders, references to other variables)
_HARMLESS_SRC = (
    r"^[\"']?(?:|\[REDACTED:[a-z_]+\].*|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|<[^>]*>|x+|\*+|\.\.\.|…|none|null|true|false|"
    r"changeme|redacted|example|your[_-].*|os\.environ.*|process\.env.*|getenv.*|env\(.*|"
    r"str|int|bool|bytes|string|number|any|optional\[.*|none\)?|self\..*)[\"']?$"
)


def find_secrets(text: str) -> list[Finding]:
    """Every secret span in `text`, sorted, overlaps merged. `<private>` sections count too."""
    if not text:
        return []
    lower = text.lower()
    spans: list[Finding] = []
    if "<private" in lower:
        spans = [Finding("private", m.start(), m.end()) for m in _private().finditer(text)]
    if text.count(".") >= 2:  # tokens with no prefix to look for (one small pattern)
        spans += [Finding("discord_token", m.start(), m.end()) for m in _dotted().finditer(text)]
    if not _maybe_secret(lower):
        return _merge(spans)
    folded = _fold(text)
    for index, (kind, _, _, group) in enumerate(_SOURCES):
        needs = _NEEDS.get(kind)
        if needs is not None and not any(n in folded for n in needs):
            continue  # no match of this pattern can be in the text
        for m in _pattern(index).finditer(text):
            start, end = m.span(group)
            if start < 0 or end <= start:
                continue
            if kind in _VARIABLE_KINDS and (
                _harmless().match(m.group(group)) or text[end : end + 1] == "("  # a call: code
            ):
                continue
            spans.append(Finding(kind, start, end))
    return _merge(spans)


def _merge(spans: list[Finding]) -> list[Finding]:
    spans.sort(key=lambda f: (f.start, -f.end))
    merged: list[Finding] = []
    for f in spans:
        if merged and f.start < merged[-1].end:
            last = merged[-1]
            if f.end > last.end:
                merged[-1] = Finding(last.kind, last.start, f.end)
            continue
        merged.append(f)
    return merged


def redact(text: str) -> str:
    """`text` with secrets replaced by `[REDACTED:<kind>]` and private sections removed."""
    if not text:
        return text
    findings = find_secrets(text)
    if not findings:
        return text
    result = _splice(text, findings)
    if result == text:
        return result
    # a replacement can create a new match (e.g. a quoted value split in two); one more pass
    again = [f for f in find_secrets(result) if f.kind != "private"]
    return _splice(result, again) if again else result


def _splice(text: str, findings: list[Finding]) -> str:
    """``text`` with each finding replaced by its marker (private sections by nothing)."""
    out: list[str] = []
    pos = 0
    for f in findings:
        out.append(text[pos : f.start])
        if f.kind != "private":
            out.append(f"[REDACTED:{f.kind}]")
        pos = f.end
    out.append(text[pos:])
    return "".join(out)


def redact_obj(value: object) -> object:
    """Redact every string inside nested dicts/lists (keys too, values mostly)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact(str(k)): redact_obj(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_obj(v) for v in value]
    return value


def redact_memory(memory: M) -> M:
    """A copy of a memory (`model.Memory`, or the index's `IndexedMemory`) with every free-text
    field redacted: title, body, author, session, branch, topics, files, relation reasons, the
    type's own fields and unknown keys. The one choke point: `Vault.write_new` calls it, so CLI
    `new`, MCP `record_*`/supersede, capture and import all pass through it; the site calls it on
    what it reads from the index. Ids, type, timestamps and relation targets are validated forms,
    left as they are."""
    import dataclasses

    from ccmemory.core.model import Relation

    def opt(value: object) -> object:
        return redact(value) if isinstance(value, str) else value

    names = {f.name for f in dataclasses.fields(memory)}  # type: ignore[arg-type]
    changes: dict[str, object] = {}
    for key in ("title", "body", "author", "session", "branch"):
        if key in names:
            changes[key] = opt(getattr(memory, key))
    for key in ("topics", "files"):
        if key in names:
            changes[key] = [opt(v) for v in getattr(memory, key)]
    if "relations" in names:
        changes["relations"] = [Relation(r.type, r.target, opt(r.reason)) for r in memory.relations]  # type: ignore[attr-defined,arg-type]
    for key in ("fields", "extra"):
        if key in names:
            value = redact_obj(getattr(memory, key))
            if isinstance(value, dict):
                changes[key] = value
    return dataclasses.replace(memory, **changes)  # type: ignore[type-var]
