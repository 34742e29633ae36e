"""Secret samples shared by the redaction tests (tests/test_redact.py) and the hostile-input tests
(tests/test_hostile_*.py): (text, the part that must never survive, the kind redact names)."""

from __future__ import annotations

from tests.capture_helpers import SECRETS

# one sample a kind of the first secret families
CASES = [
    ("AWS access key AKIAZ7Q4XJ2M5N8P3R6T here", "AKIAZ7Q4XJ2M5N8P3R6T", "aws_access_key"),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Xk2Lm9N", "wJalrXUtnFEMI", "aws_secret_key"),
    ("token ghp_R7d9Kq2mXv8LpT4nWz6Yb3Hc5Jf1Gs0Ae9Uu", "ghp_R7d9", "github_token"),
    (
        "pat github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123",
        "github_pat_11",
        "github_token",
    ),
    ("xoxb-204817362514-4093827165403-Zq8Xk2Lm9NwR7d9Kq2mXv8Lp", "xoxb-2048", "slack_token"),
    (
        "hook https://hooks.slack.com/services/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",
        "Zq8Xk2Lm9NwR",
        "slack_webhook",
    ),
    ("OPENAI sk-proj-Qm3Zt8Vx2Lp9Rk4Ws7Yn1Bc6Df0Gh5Jk", "sk-proj-Qm3", "openai_key"),
    ("legacy sk-Qm3Zt8Vx2Lp9Rk4Ws7Yn1Bc6Df0Gh5JkT3BlbkFJ", "sk-Qm3Zt8", "openai_key"),
    (f"key {SECRETS['anthropic']}", "sk-ant-api03", "anthropic_key"),
    (f"jwt {SECRETS['jwt']}", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9", "jwt"),
    ("postgres://app:Tr0ub4dor-and-3-horses@db.internal:5432/prod", "Tr0ub4dor", "url_password"),
    ("mongodb+srv://root:p%40ssw0rd!@cluster0.mongodb.net/db", "p%40ssw0rd", "url_password"),
    ("Server=db;Database=app;User Id=sa;Password=Hunter2!xyz;", "Hunter2!xyz", "connection_password"),
    ("DB_PASSWORD=Tr0ub4dor-and-3-horses", "Tr0ub4dor", "secret_assignment"),
    ("export API_TOKEN='9f8e7d6c5b4a39281706f5e4d3c2b1a0'", "9f8e7d6c5b4a", "secret_assignment"),
    ('{"client_secret": "c2VjcmV0LXZhbHVlLTEyMzQ1"}', "c2VjcmV0LXZhbHVl", "secret_assignment"),
    ("stripeKey: sk_live_51HqZ8Xk2Lm9NwR7d9Kq2mXv8Lp", "sk_live_51", "stripe_key"),
    ("Authorization: Bearer Zq8Xk2Lm9NwR7d9Kq2mXv8LpT4nW", "Zq8Xk2Lm9NwR7d9", "bearer_token"),
    (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
        "b3BlbnNzaC1r",
        "private_key",
    ),
]


# the kinds the issue found missing, plus others of the same families (issue 19)
NEW_CASES = [
    (
        "GET https://api.example.com/v2/items?access_token=Zq8Xk2Lm9NwR7d9Kq2mX&page=2",
        "Zq8Xk2Lm9NwR7d9Kq2mX",
        "url_query_secret",
    ),
    ("wget 'https://h.example/x?api_key=9f8e7d6c5b4a3928'", "9f8e7d6c5b4a3928", "url_query_secret"),
    ("Authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l", "YWxhZGRpbjpvcGVuc2VzYW1l", "basic_auth"),
    ("curl -u deploy:Tr0ub4dor-horses https://ci.example.com/api", "Tr0ub4dor-horses", "curl_user"),
    ("curl --user=deploy:S3cr3t-Pa55 https://x", "S3cr3t-Pa55", "curl_user"),
    (
        "//registry.npmjs.org/:_authToken npm_R7d9Kq2mXv8LpT4nWz6Yb3Hc5Jf1Gs0Ae9Uu",
        "npm_R7d9Kq2mXv8",
        "npm_token",
    ),
    ("mysql -h db -u root -pHunter2xyz app", "Hunter2xyz", "cli_password"),
    ("pg_dump --password Hunter2xyz app", "Hunter2xyz", "cli_password"),
    ("gitlab glpat-Zq8Xk2Lm9NwR7d9Kq2mX", "glpat-Zq8Xk2Lm9NwR", "gitlab_token"),
    ("hf hf_Zq8Xk2Lm9NwR7d9Kq2mXv8LpT4nWz6Yb3H", "hf_Zq8Xk2Lm9NwR7d9", "huggingface_token"),
]
ALL = CASES + NEW_CASES
ALL_TEXT = "\n".join(t for t, _, _ in ALL)
