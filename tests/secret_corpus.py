"""A corpus of realistic secrets, one kind a row, each with a realistic near miss (issue 32).

Every value is made up and assembled at import time (no literal token sits in the repository).
A row: (kind, text holding the secret, the secret value that must never survive, a near miss:
text of the same shape that holds no secret and must survive redaction unchanged).
Used by tests/test_redact_corpus.py and bench/secret_corpus.py (counts in RESULTS-hostile.md).
"""

from __future__ import annotations

import base64
import hashlib


def _fill(
    seed: str, n: int, alphabet: str = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"
) -> str:
    """A deterministic pseudo-random string of ``n`` characters (looks like a token, is not one)."""
    out, i = [], 0
    while len(out) < n:
        digest = hashlib.sha256(f"{seed}:{i}".encode()).digest()
        out += [alphabet[b % len(alphabet)] for b in digest]
        i += 1
    return "".join(out[:n])


HEX = "0123456789abcdef"
B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

# (kind, text, secret, near miss)
CORPUS: list[tuple[str, str, str, str]] = []


def _add(kind: str, template: str, secret: str, near: str) -> None:
    CORPUS.append((kind, template.format(s=secret), secret, near))


# --- cloud providers -----------------------------------------------------------------------------
_add(
    "aws access key",
    "aws configure set aws_access_key_id {s}",
    "AKIA" + _fill("aws", 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"),
    "the IAM role arn:aws:iam::123456789012:role/deploy has no access key",
)
_add(
    "aws secret key",
    "AWS_SECRET_ACCESS_KEY={s}",
    _fill("awss", 40, B64[:-2] + "/+"),
    "AWS_SECRET_ACCESS_KEY is read from the instance profile, never from .env",
)
_add(
    "aws session token",
    "export AWS_SESSION_TOKEN={s}",
    "IQoJb3JpZ2luX2VjE" + _fill("sess", 700, B64),
    "the session token expires after 12 hours (aws sts get-session-token)",
)
_add(
    "gcp api key",
    "MAPS_KEY={s}",
    "AIza" + _fill("gcp", 35, B64[:-2] + "_-"),
    "the maps key is restricted to our referrer in the GCP console",
)
_add(
    "gcp service account json",
    '{{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\n{s}\\n-----END PRIVATE KEY-----\\n"}}',
    _fill("gsa", 64, B64),
    '{"type": "service_account", "client_email": "ci@proj.iam.gserviceaccount.com"}',
)
_add(
    "azure storage connection string",
    "DefaultEndpointsProtocol=https;AccountName=prodblobs;AccountKey={s};EndpointSuffix=core.windows.net",
    _fill("azs", 86, B64) + "==",
    "DefaultEndpointsProtocol=https;AccountName=prodblobs;EndpointSuffix=core.windows.net",
)
_add(
    "azure service bus",
    "Endpoint=sb://prod.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey={s}",
    _fill("asb", 44, B64),
    "Endpoint=sb://prod.servicebus.windows.net/;SharedAccessKeyName=send",
)
_add(
    "azure sas",
    "https://acct.blob.core.windows.net/c/f.zip?sv=2022-11-02&sp=r&sig={s}",
    _fill("sas", 44, B64[:-2]) + "%3D",
    "https://acct.blob.core.windows.net/c/f.zip?sv=2022-11-02&sp=r",
)
_add(
    "digitalocean token",
    "doctl auth init -t {s}",
    "dop_v1_" + _fill("do", 64, HEX),
    "doctl auth init --context staging",
)
_add(
    "heroku api key",
    "HEROKU_API_KEY={s}",
    _fill("her", 8, HEX)
    + "-"
    + _fill("her2", 4, HEX)
    + "-4"
    + _fill("her3", 3, HEX)
    + "-a"
    + _fill("her4", 3, HEX)
    + "-"
    + _fill("her5", 12, HEX),
    "HEROKU_APP_NAME=orders-prod",
)
_add(
    "cloudflare token",
    "CLOUDFLARE_API_TOKEN={s}",
    _fill("cf", 40, B64[:-2] + "_-"),
    "CLOUDFLARE_ZONE_ID is public, the token is in 1Password",
)

# --- source hosting and package registries --------------------------------------------------------
_add(
    "github classic token",
    "git clone https://{s}@github.com/acme/app.git",
    "ghp_" + _fill("ghp", 36),
    "git clone https://github.com/acme/app.git",
)
_add(
    "github oauth header",
    "curl -H 'Authorization: token {s}' https://api.github.com/user",
    _fill("ght", 40, HEX),
    "curl -H 'Accept: application/vnd.github+json' https://api.github.com/user",
)
_add(
    "github fine-grained pat",
    "GH_PAT={s}",
    "github_pat_11" + _fill("ghf", 80, B64[:-2] + "_"),
    "create a fine-grained PAT with contents:read only",
)
_add(
    "gitlab token",
    "glab auth login --token {s}",
    "glpat-" + _fill("gl", 20, B64[:-2] + "_-"),
    "glab auth login --hostname gitlab.example.com",
)
_add(
    "npm token",
    "//registry.npmjs.org/:_authToken={s}",
    "npm_" + _fill("npm", 36),
    "//registry.npmjs.org/:always-auth=true",
)
_add(
    "npmrc legacy auth",
    "_auth={s}",
    base64.b64encode(b"deploy:" + _fill("npma", 16).encode()).decode(),
    "_auth is deprecated; use a scoped _authToken",
)
_add(
    "pypi token",
    "TWINE_PASSWORD={s}",
    "pypi-AgEIcHlwaS5vcmc" + _fill("pypi", 70, B64[:-2] + "_-"),
    "TWINE_USERNAME=__token__",
)
_add(
    "dockerhub pat",
    "echo {s} | docker login -u acme --password-stdin",
    "dckr_pat_" + _fill("dck", 27, B64[:-2] + "_-"),
    "docker login -u acme --password-stdin < ~/.docker-pass",
)
_add(
    "docker auths json",
    '{{"auths": {{"ghcr.io": {{"auth": "{s}"}}}}}}',
    base64.b64encode(("acme:" + _fill("dka", 24)).encode()).decode(),
    '{"auths": {"ghcr.io": {}}, "credsStore": "desktop"}',
)
_add(
    "huggingface token",
    "huggingface-cli login --token {s}",
    "hf_" + _fill("hf", 34),
    "huggingface-cli login --add-to-git-credential",
)
_add(
    "rubygems key", "GEM_HOST_API_KEY={s}", "rubygems_" + _fill("rg", 48, HEX), "gem push pkg/acme-1.2.0.gem"
)

# --- payment, messaging, SaaS ---------------------------------------------------------------------
_add(
    "stripe live key",
    "Stripe.api_key = '{s}'",
    "sk_" + "live_" + _fill("stl", 24),
    "Stripe.api_version = '2024-06-20'",
)
_add("stripe restricted key", "STRIPE_KEY={s}", "rk_" + "live_" + _fill("str", 24), "STRIPE_MODE=live")
_add(
    "stripe webhook secret",
    "stripe listen prints {s} for the local endpoint",
    "whsec_" + _fill("wh", 32),
    "stripe listen --forward-to localhost:8000/webhooks",
)
_add(
    "slack bot token",
    "SLACK_BOT={s}",
    "xoxb-" + _fill("sl1", 12, "0123456789") + "-" + _fill("sl2", 13, "0123456789") + "-" + _fill("sl3", 24),
    "SLACK_CHANNEL=#deploys",
)
_add(
    "slack webhook",
    "curl -X POST {s}",
    "https://hooks.slack.com/services/T"
    + _fill("t", 8, "ABCDEFGHJKLMNPQRSTUVWXYZ0123456789")
    + "/B"
    + _fill("b", 8, "ABCDEFGHJKLMNPQRSTUVWXYZ0123456789")
    + "/"
    + _fill("w", 24),
    "curl -X POST https://slack.com/api/chat.postMessage",
)
_add(
    "discord bot token",
    "DISCORD_TOKEN={s}",
    "MT"
    + _fill("dc1", 24, B64[:-2])
    + "."
    + _fill("dc2", 6, B64[:-2] + "_-")
    + "."
    + _fill("dc3", 38, B64[:-2] + "_-"),
    "DISCORD_GUILD_ID=1029384756",
)
_add(
    "discord token in code",
    "client.run('{s}')",
    "MT"
    + _fill("dd1", 24, B64[:-2])
    + "."
    + _fill("dd2", 6, B64[:-2] + "_-")
    + "."
    + _fill("dd3", 38, B64[:-2] + "_-"),
    "client.run(os.environ['DISCORD_TOKEN'])",
)
_add(
    "telegram bot token",
    "curl https://api.telegram.org/bot{s}/getMe",
    _fill("tg1", 10, "0123456789") + ":AA" + _fill("tg2", 33, B64[:-2] + "_-"),
    "curl https://api.telegram.org/ returns 404 without a bot path",
)
_add(
    "twilio auth token",
    "TWILIO_AUTH_TOKEN={s}",
    _fill("tw", 32, HEX),
    "TWILIO_ACCOUNT_SID is not secret, the auth token is",
)
_add(
    "sendgrid key",
    "SENDGRID_API_KEY={s}",
    "SG." + _fill("sg1", 22, B64[:-2] + "_-") + "." + _fill("sg2", 43, B64[:-2] + "_-"),
    "SG.send() retries three times",
)
_add(
    "sendgrid key in prose",
    "the mail key is {s} until Friday",
    "SG." + _fill("sg3", 22, B64[:-2] + "_-") + "." + _fill("sg4", 43, B64[:-2] + "_-"),
    "the mail key rotates every Friday",
)
_add("mailgun key", "MAILGUN_API_KEY={s}", "key-" + _fill("mg", 32, HEX), "MAILGUN_DOMAIN=mg.acme.io")
_add(
    "shopify token",
    "SHOPIFY_ACCESS_TOKEN={s}",
    "shpat_" + _fill("shp", 32, HEX),
    "SHOPIFY_SHOP=acme.myshopify.com",
)
_add(
    "shopify token in prose",
    "use {s} for the admin API",
    "shpat_" + _fill("shq", 32, HEX),
    "use the admin API version 2024-04",
)
_add(
    "openai key",
    "OPENAI_API_KEY={s}",
    "sk-proj-" + _fill("oai", 48, B64[:-2] + "_-"),
    "OPENAI_MODEL=gpt-4o-mini",
)
_add(
    "anthropic key",
    "client = Anthropic(api_key='{s}')",
    "sk-ant-api03-" + _fill("ant", 80, B64[:-2] + "_-"),
    "client = Anthropic()  # reads ANTHROPIC_API_KEY",
)
_add("datadog api key", "DD_API_KEY={s}", _fill("dd", 32, HEX), "DD_SITE=datadoghq.eu")
_add(
    "sentry dsn",
    "SENTRY_DSN=https://{s}@o123.ingest.sentry.io/456",
    _fill("sen", 32, HEX),
    "SENTRY_ENVIRONMENT=production",
)
_add(
    "x-api-key header",
    "curl -H 'X-API-Key: {s}' https://api.acme.io/v1",
    _fill("xak", 40),
    "curl -H 'X-Request-Id: 5f1c' https://api.acme.io/v1",
)
_add("api key header (generic)", "api-key: {s}", _fill("akh", 32), "api-version: 2024-02-01")

# --- databases and URLs ---------------------------------------------------------------------------
_add(
    "postgres url",
    "DATABASE_URL=postgres://app:{s}@db.internal:5432/prod",
    _fill("pg", 20),
    "DATABASE_URL=postgres://db.internal:5432/prod",
)
_add(
    "redis url without user",
    "REDIS_URL=redis://:{s}@cache.internal:6379/0",
    _fill("rd", 24),
    "REDIS_URL=redis://cache.internal:6379/0",
)
_add(
    "mongodb srv",
    "mongodb+srv://root:{s}@cluster0.abcd.mongodb.net/app",
    _fill("mg2", 18),
    "mongodb+srv://cluster0.abcd.mongodb.net/app",
)
_add(
    "amqp url",
    "CELERY_BROKER_URL=amqp://worker:{s}@rabbit:5672//",
    _fill("amqp", 16),
    "CELERY_BROKER_URL=amqp://rabbit:5672//",
)
_add(
    "jdbc password",
    "jdbc:postgresql://db:5432/app?user=app&password={s}",
    _fill("jdbc", 16),
    "jdbc:postgresql://db:5432/app?user=app&ssl=true",
)
_add(
    "ado connection string",
    "Server=tcp:sql.acme.net;Database=app;User ID=app;Password={s};",
    _fill("ado", 18),
    "Server=tcp:sql.acme.net;Database=app;Integrated Security=true;",
)
_add(
    "mysql cli",
    "mysql -h db -u root -p{s} app",
    _fill("my", 14),
    "mysql -h db -u root -p app  # prompts for it",
)
_add(
    "basic auth url",
    "pip install --index-url https://ci:{s}@pypi.acme.io/simple acme",
    _fill("bau", 20),
    "pip install --index-url https://pypi.acme.io/simple acme",
)

# --- config files ---------------------------------------------------------------------------------
_add(
    "dotenv secret key",
    "SECRET_KEY={s}",
    "django-insecure-" + _fill("dj", 40, B64[:-2] + "!@#%^&*(-_=+)"),
    "SECRET_KEY_FALLBACKS=[]",
)
_add("dotenv quoted", 'JWT_SECRET="{s}"', _fill("jwts", 48), 'JWT_ALGORITHM="HS256"')
_add(
    "yaml password",
    "database:\n  user: app\n  password: {s}\n",
    _fill("yml", 18),
    "database:\n  user: app\n  password_file: /run/secrets/db\n",
)
_add("yaml nested token", "slack:\n  token: {s}\n", _fill("ymt", 30), "slack:\n  token_ttl: 3600\n")
_add(
    "json client secret",
    '{{"client_id": "web", "client_secret": "{s}"}}',
    _fill("cs", 40),
    '{"client_id": "web", "client_secret_ref": "vault:oauth/web"}',
)
_add(
    "netrc",
    "machine api.heroku.com\n  login ci@acme.io\n  password {s}\n",
    _fill("nrc", 36),
    "machine api.heroku.com\n  login ci@acme.io\n",
)
_add(
    "netrc one line",
    "machine github.com login ci password {s}",
    _fill("nr1", 40),
    "machine github.com login ci",
)
_add("grep of .env", ".env:3:STRIPE_SECRET={s}", _fill("grp", 30), ".env:4:STRIPE_MODE=test")
_add(
    "printed os.environ",
    "environ({{'HOME': '/root', 'GITHUB_TOKEN': '{s}', 'LANG': 'C.UTF-8'}})",
    "ghs_" + _fill("env", 36),
    "environ({'HOME': '/root', 'LANG': 'C.UTF-8'})",
)
_add(
    "kubernetes secret data",
    "data:\n  password: {s}\n",
    base64.b64encode(_fill("k8s", 18).encode()).decode(),
    "data:\n  username: YWRtaW4=\n",
)
_add(
    "private key pem",
    "-----BEGIN RSA PRIVATE KEY-----\n{s}\n-----END RSA PRIVATE KEY-----",
    _fill("pem", 64, B64),
    "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
)
_add(
    "pgp private block",
    "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{s}\n-----END PGP PRIVATE KEY BLOCK-----",
    _fill("pgp", 64, B64),
    "-----BEGIN PGP PUBLIC KEY BLOCK-----\nmQIN\n-----END PGP PUBLIC KEY BLOCK-----",
)
_add(
    "jwt",
    "Authorization: Bearer {s}",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0." + _fill("jwt", 43, B64[:-2] + "_-"),
    "Authorization: Bearer <token from the login response>",
)
_add(
    "bearer token",
    "curl -H 'Authorization: Bearer {s}' https://api.acme.io",
    _fill("brr", 40),
    "curl -H 'Authorization: Bearer $TOKEN' https://api.acme.io",
)
_add(
    "basic auth header",
    "Authorization: Basic {s}",
    base64.b64encode(("admin:" + _fill("bah", 12)).encode()).decode(),
    'Authorization: Basic realm="api"',
)
_add(
    "k8s service account token",
    "kubectl --token={s} get pods",
    "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJpc3MiOiJrdWJlcm5ldGVzIn0." + _fill("k8t", 60, B64[:-2] + "_-"),
    "kubectl --context=prod get pods",
)
_add(
    "terraform cloud token",
    'credentials "app.terraform.io" {{ token = "{s}" }}',
    _fill("tfc", 14) + ".atlasv1." + _fill("tfc2", 60),
    'credentials "app.terraform.io" { }',
)
_add("vault token", "VAULT_TOKEN={s}", "hvs." + _fill("hvs", 24), "VAULT_ADDR=https://vault.acme.io")

NEAR_MISSES = [near for _kind, _text, _secret, near in CORPUS]
