"""Dev split: "tillwell", an invented Django online shop. Hand-written sessions + queries."""

CWD = "/home/maren/src/tillwell"

SESSIONS = [
    (
        "lockout",
        "2026-08-03T09:12:00",
        "fix/auth-lockout",
        [
            (
                "u",
                "someone is brute forcing the /accounts/login/ form, I see thousands of POSTs from two IPs in the nginx log. can we lock an account after a few bad passwords?",
            ),
            ("a", "I'll look at how login is wired first."),
            (
                "read",
                "accounts/views.py",
                "from django.contrib.auth import views as auth_views\n\n\nclass ShopLoginView(auth_views.LoginView):\n    template_name = 'accounts/login.html'\n    redirect_authenticated_user = True\n",
            ),
            (
                "grep",
                "AUTHENTICATION_BACKENDS",
                "tillwell/settings/base.py:88:AUTHENTICATION_BACKENDS = ['django.contrib.auth.backends.ModelBackend']",
            ),
            (
                "a",
                "There is no throttling at all. I'll add a small FailedLogin counter keyed by username+IP with a 15 minute window and a lock after 5 failures, checked in a custom form clean().",
            ),
            (
                "write",
                "accounts/lockout.py",
                "from django.core.cache import cache\n\nMAX_FAILURES = 5\nWINDOW = 15 * 60\n\n\ndef _key(username, ip):\n    return f'login-fail:{username.lower()}:{ip}'\n\n\ndef register_failure(username, ip):\n    key = _key(username, ip)\n    cache.add(key, 0, WINDOW)\n    return cache.incr(key)\n\n\ndef is_locked(username, ip):\n    return cache.get(_key(username, ip), 0) >= MAX_FAILURES\n",
            ),
            (
                "edit",
                "accounts/forms.py",
                "class ShopAuthForm(AuthenticationForm):\n    pass",
                "class ShopAuthForm(AuthenticationForm):\n    def clean(self):\n        ip = self.request.META.get('REMOTE_ADDR', '')\n        username = self.data.get('username', '')\n        if is_locked(username, ip):\n            raise ValidationError('Too many failed attempts. Try again in 15 minutes.', code='locked')\n        try:\n            return super().clean()\n        except ValidationError:\n            register_failure(username, ip)\n            raise",
            ),
            (
                "bash",
                "pytest accounts/tests/test_lockout.py -q",
                ".....                                                                    [100%]\n5 passed in 1.84s",
            ),
            ("u", "nice. does it also apply to the DRF token endpoint?"),
            ("a", "No, /api/token/ uses its own serializer. I'll reuse the same helpers there."),
            (
                "edit",
                "api/auth.py",
                "        user = authenticate(request, **attrs)",
                "        if is_locked(attrs['username'], ip):\n            raise Throttled(detail='account temporarily locked')\n        user = authenticate(request, **attrs)",
            ),
            (
                "bash",
                "pytest accounts api -q",
                "........................                                                 [100%]\n24 passed in 4.02s",
            ),
            (
                "a",
                "Both the HTML login and the token endpoint now lock after 5 failed attempts for 15 minutes per username+IP.",
            ),
        ],
    ),
    (
        "flaky-login-rerun",
        "2026-08-05T16:40:00",
        "main",
        [
            (
                "u",
                "test_login_redirects_to_next fails on CI maybe one run in five, never locally. can we just make CI retry it so people stop re-running the whole pipeline?",
            ),
            (
                "bash",
                "gh run view 4410213 --log-failed | tail -20",
                "FAILED accounts/tests/test_login.py::test_login_redirects_to_next - AssertionError: assert '/accounts/login/?next=/orders/' == '/orders/'\n1 failed, 411 passed in 212.33s",
            ),
            ("a", "I'll add pytest-rerunfailures and mark just that test with @pytest.mark.flaky(reruns=2)."),
            (
                "bash",
                "pip install pytest-rerunfailures==14.0 && pip freeze | grep rerun >> requirements/dev.txt",
                "Successfully installed pytest-rerunfailures-14.0",
            ),
            (
                "edit",
                "accounts/tests/test_login.py",
                "def test_login_redirects_to_next(client, customer):",
                "@pytest.mark.flaky(reruns=2)\ndef test_login_redirects_to_next(client, customer):",
            ),
            (
                "bash",
                "pytest accounts/tests/test_login.py -q -p no:randomly",
                "....                                                                     [100%]\n4 passed in 0.91s",
            ),
            (
                "u",
                "hmm, actually Ilse says retries hide real bugs and she'll block the PR. revert it, let's leave a note in the test instead",
            ),
            (
                "bash",
                "git checkout -- accounts/tests/test_login.py requirements/dev.txt && git status --short",
                "",
            ),
            (
                "edit",
                "accounts/tests/test_login.py",
                "def test_login_redirects_to_next(client, customer):",
                "# FIXME: intermittently fails on CI (~20%), redirect lands back on the login page.\n# Not reproducible locally; do not add reruns (see team discussion 2026-08-05).\ndef test_login_redirects_to_next(client, customer):",
            ),
            ("a", "Reverted the rerun plugin and left a FIXME comment documenting the intermittent failure."),
        ],
    ),
    (
        "flaky-login-fix",
        "2026-08-19T10:05:00",
        "fix/flaky-login",
        [
            (
                "u",
                "back to that login redirect test that fails randomly on CI. I found CI runs with TZ=UTC and the session expiry check uses localtime. can you dig in?",
            ),
            (
                "read",
                "accounts/middleware.py",
                "from datetime import datetime\n\n\nclass SessionExpiryMiddleware:\n    def __init__(self, get_response):\n        self.get_response = get_response\n\n    def __call__(self, request):\n        expires = request.session.get('expires_at')\n        if expires and datetime.now().timestamp() > expires:\n            request.session.flush()\n        return self.get_response(request)\n",
            ),
            (
                "a",
                "Found it: `datetime.now()` is naive local time, but `expires_at` is written from `timezone.now()` (UTC). On CI near the hour boundary with the customer fixture created 'now', the session looks already expired, so the redirect goes back to login. Fix: compare aware datetimes, and freeze time in the test.",
            ),
            (
                "edit",
                "accounts/middleware.py",
                "        if expires and datetime.now().timestamp() > expires:",
                "        if expires and timezone.now().timestamp() > expires:",
            ),
            (
                "edit",
                "accounts/tests/test_login.py",
                "# FIXME: intermittently fails on CI (~20%), redirect lands back on the login page.\n# Not reproducible locally; do not add reruns (see team discussion 2026-08-05).\ndef test_login_redirects_to_next(client, customer):",
                "@freeze_time('2026-03-29 01:59:30')  # DST switch in Europe/Berlin\ndef test_login_redirects_to_next(client, customer):",
            ),
            (
                "bash",
                "TZ=Europe/Berlin pytest accounts/tests/test_login.py -q --count=50",
                "........................................................................ [ 36%]\n........................................................................ [ 72%]\n.......................................................                  [100%]\n200 passed in 9.12s",
            ),
            ("u", "200 green with TZ set, great. push it"),
            (
                "bash",
                "git commit -am 'Fix flaky login redirect: compare aware datetimes in SessionExpiryMiddleware' && git push -u origin fix/flaky-login",
                "[fix/flaky-login 3c9d1e2] Fix flaky login redirect: compare aware datetimes in SessionExpiryMiddleware\n 2 files changed, 3 insertions(+), 4 deletions(-)",
            ),
        ],
    ),
    (
        "reset-https",
        "2026-08-07T11:20:00",
        "main",
        [
            (
                "u",
                "customers complain the 'forgot password' mail has an http:// link and Gmail flags it. fix please",
            ),
            (
                "grep",
                "password_reset",
                "accounts/urls.py:14:    path('password/reset/', ShopPasswordResetView.as_view(), name='password_reset'),\ntemplates/registration/password_reset_email.html:3:{{ protocol }}://{{ domain }}{% url 'password_reset_confirm' uidb64=uid token=token %}",
            ),
            (
                "a",
                "The template uses {{ protocol }}, which Django derives from request.is_secure(). Behind the load balancer we never set SECURE_PROXY_SSL_HEADER, so Django thinks every request is plain http.",
            ),
            (
                "edit",
                "tillwell/settings/production.py",
                "USE_X_FORWARDED_HOST = True",
                "USE_X_FORWARDED_HOST = True\nSECURE_PROXY_SSL_HEADER = ('HTTP_X_FORWARDED_PROTO', 'https')",
            ),
            (
                "edit",
                "accounts/views.py",
                "class ShopPasswordResetView(auth_views.PasswordResetView):\n    email_template_name = 'registration/password_reset_email.html'",
                "class ShopPasswordResetView(auth_views.PasswordResetView):\n    email_template_name = 'registration/password_reset_email.html'\n    extra_email_context = {'protocol': 'https'}",
            ),
            (
                "bash",
                "pytest accounts/tests/test_password_reset.py -q",
                "...                                                                      [100%]\n3 passed in 0.77s",
            ),
            (
                "a",
                "Reset links are now https: the proxy header is trusted in production and the reset view forces protocol=https as a belt-and-braces.",
            ),
        ],
    ),
    (
        "google-login",
        "2026-08-11T14:02:00",
        "feature/social-login",
        [
            ("u", "marketing wants 'sign in with Google' on the login page. use allauth?"),
            (
                "bash",
                "pip install 'django-allauth[socialaccount]==65.0.2'",
                "Successfully installed django-allauth-65.0.2 pyjwt-2.9.0",
            ),
            (
                "edit",
                "tillwell/settings/base.py",
                "    'accounts',",
                "    'accounts',\n    'allauth',\n    'allauth.account',\n    'allauth.socialaccount',\n    'allauth.socialaccount.providers.google',",
            ),
            (
                "bash",
                "python manage.py migrate",
                "django.core.exceptions.ImproperlyConfigured: allauth.account.middleware.AccountMiddleware must be added to settings.MIDDLEWARE",
                True,
            ),
            (
                "edit",
                "tillwell/settings/base.py",
                "    'django.contrib.messages.middleware.MessageMiddleware',",
                "    'django.contrib.messages.middleware.MessageMiddleware',\n    'allauth.account.middleware.AccountMiddleware',",
            ),
            (
                "bash",
                "python manage.py migrate",
                "Applying socialaccount.0001_initial... OK\nApplying socialaccount.0006_alter_socialaccount_extra_data... OK",
            ),
            (
                "bash",
                "python manage.py runserver 0:8000 & sleep 3; curl -s -o /dev/null -w '%{http_code}' localhost:8000/accounts/google/login/",
                "500\nSocialApp.DoesNotExist: SocialApp matching query does not exist.",
                True,
            ),
            (
                "a",
                "The provider needs client credentials; rather than a SocialApp row I'll configure it through settings from env vars, and add SITE_ID = 1.",
            ),
            (
                "edit",
                "tillwell/settings/base.py",
                "SITE_ID = None",
                "SITE_ID = 1\nSOCIALACCOUNT_PROVIDERS = {'google': {'APP': {'client_id': env('GOOGLE_CLIENT_ID'), 'secret': env('GOOGLE_CLIENT_SECRET')}, 'SCOPE': ['email', 'profile']}}",
            ),
            ("u", "ok the button shows up and redirects to google now. leave the template styling for later"),
        ],
    ),
    (
        "samesite",
        "2026-08-26T08:47:00",
        "fix/checkout-logout",
        [
            (
                "u",
                "support ticket: after paying with Klarna/Sofort people land on the thank-you page logged out and their cart looks empty. only some browsers",
            ),
            (
                "grep",
                "SESSION_COOKIE_SAMESITE",
                "tillwell/settings/production.py:31:SESSION_COOKIE_SAMESITE = 'Strict'",
            ),
            (
                "a",
                "That's it. The payment provider redirects back with a top-level cross-site navigation; with SameSite=Strict the browser doesn't send the session cookie on that request, so Django sees an anonymous user. Lax still sends it on top-level GET navigations.",
            ),
            (
                "edit",
                "tillwell/settings/production.py",
                "SESSION_COOKIE_SAMESITE = 'Strict'",
                "# Lax, not Strict: payment providers redirect back cross-site (see ticket #812)\nSESSION_COOKIE_SAMESITE = 'Lax'\nCSRF_COOKIE_SAMESITE = 'Lax'",
            ),
            (
                "bash",
                "pytest checkout/tests/test_return_url.py -q",
                "..                                                                       [100%]\n2 passed in 0.63s",
            ),
            ("u", "who set Strict in the first place?"),
            (
                "bash",
                "git log -S\"SESSION_COOKIE_SAMESITE = 'Strict'\" --oneline -- tillwell/settings/production.py",
                "a71f02b security hardening from pentest report",
            ),
            (
                "a",
                "It came in with the pentest hardening commit a71f02b. Lax still protects against CSRF on POST, so this is safe; I left a comment pointing to the ticket.",
            ),
        ],
    ),
    (
        "stripe-signature",
        "2026-08-12T13:30:00",
        "feature/checkout-v2",
        [
            (
                "u",
                "stripe dashboard shows every webhook delivery to /payments/stripe/webhook/ failing with 400. orders stay 'pending' forever",
            ),
            (
                "bash",
                "stripe listen --forward-to localhost:8000/payments/stripe/webhook/ & stripe trigger payment_intent.succeeded",
                "2026-08-12 13:31:02   --> payment_intent.succeeded [evt_3PkX]\n2026-08-12 13:31:02  <--  [400] POST http://localhost:8000/payments/stripe/webhook/\nstripe.error.SignatureVerificationError: No signatures found matching the expected signature for payload",
                True,
            ),
            (
                "read",
                "payments/webhooks.py",
                "import json\nimport stripe\n\n\n@csrf_exempt\ndef stripe_webhook(request):\n    payload = json.dumps(json.loads(request.body))\n    sig = request.META['HTTP_STRIPE_SIGNATURE']\n    event = stripe.Webhook.construct_event(payload, sig, settings.STRIPE_WEBHOOK_SECRET)\n    handle(event)\n    return HttpResponse(status=200)\n",
            ),
            (
                "a",
                "The payload is re-serialised with json.dumps before verification, which changes whitespace and key order, so the HMAC never matches. Stripe signs the exact raw bytes.",
            ),
            (
                "edit",
                "payments/webhooks.py",
                "    payload = json.dumps(json.loads(request.body))",
                "    payload = request.body  # raw bytes: Stripe signs them exactly",
            ),
            (
                "bash",
                "stripe trigger payment_intent.succeeded",
                "2026-08-12 13:36:40  <--  [200] POST http://localhost:8000/payments/stripe/webhook/",
            ),
            ("u", "and the orders stuck in pending from the last 3 days?"),
            (
                "write",
                "payments/management/commands/replay_stripe_events.py",
                "from django.core.management.base import BaseCommand\nimport stripe\n\nfrom payments.webhooks import handle\n\n\nclass Command(BaseCommand):\n    help = 'Re-process payment_intent.succeeded events since a date'\n\n    def add_arguments(self, parser):\n        parser.add_argument('--since', required=True)\n\n    def handle(self, *args, since, **kw):\n        for ev in stripe.Event.list(type='payment_intent.succeeded', created={'gte': since}).auto_paging_iter():\n            handle(ev)\n",
            ),
            (
                "bash",
                "python manage.py replay_stripe_events --since 1755043200",
                "processed 138 events, 138 orders moved pending -> paid",
            ),
        ],
    ),
    (
        "vat-rounding",
        "2026-08-14T10:15:00",
        "feature/checkout-v2",
        [
            (
                "u",
                "accountant found invoices where the VAT is one cent off from what the line items add up to. example order #10342, 3 x 19.99 at 19%",
            ),
            (
                "read",
                "checkout/pricing.py",
                "def vat_amount(net, rate):\n    return round(net * rate, 2)\n\n\ndef order_totals(lines):\n    net = sum(l.unit_price * l.qty for l in lines)\n    vat = sum(vat_amount(l.unit_price, l.rate) * l.qty for l in lines)\n    return net, vat, net + vat\n",
            ),
            (
                "a",
                "Two problems: float round() uses banker's rounding on binary floats, and VAT is rounded per unit then multiplied. German invoicing expects rounding per line (or per total) with ROUND_HALF_UP on Decimal.",
            ),
            (
                "edit",
                "checkout/pricing.py",
                "def vat_amount(net, rate):\n    return round(net * rate, 2)",
                "CENT = Decimal('0.01')\n\n\ndef vat_amount(net: Decimal, rate: Decimal) -> Decimal:\n    return (net * rate).quantize(CENT, rounding=ROUND_HALF_UP)",
            ),
            (
                "edit",
                "checkout/pricing.py",
                "    vat = sum(vat_amount(l.unit_price, l.rate) * l.qty for l in lines)",
                "    vat = sum(vat_amount(l.unit_price * l.qty, l.rate) for l in lines)",
            ),
            (
                "bash",
                "pytest checkout/tests/test_pricing.py -q",
                "F...\nE   assert Decimal('11.39') == Decimal('11.40')\n1 failed, 3 passed",
                True,
            ),
            (
                "a",
                "The old test hard-coded the wrong per-unit result (11.40). 59.97 x 0.19 = 11.3943 -> 11.39 is correct. Updating the expectation and adding order #10342 as a regression case.",
            ),
            (
                "edit",
                "checkout/tests/test_pricing.py",
                "    assert vat == Decimal('11.40')",
                "    assert vat == Decimal('11.39')  # order #10342",
            ),
            (
                "bash",
                "pytest checkout/tests/test_pricing.py -q",
                "....                                                                     [100%]\n4 passed in 0.41s",
            ),
        ],
    ),
    (
        "coupon-stacking",
        "2026-08-18T15:55:00",
        "feature/checkout-v2",
        [
            (
                "u",
                "people are combining WELCOME10 with the summer sale code and getting 35% off. only one promo code per order unless the code is marked stackable",
            ),
            (
                "read",
                "promotions/models.py",
                "class Coupon(models.Model):\n    code = models.CharField(max_length=32, unique=True)\n    percent_off = models.PositiveSmallIntegerField()\n    valid_until = models.DateTimeField()\n",
            ),
            (
                "edit",
                "promotions/models.py",
                "    valid_until = models.DateTimeField()",
                "    valid_until = models.DateTimeField()\n    stackable = models.BooleanField(default=False, help_text='May be combined with other codes')",
            ),
            (
                "bash",
                "python manage.py makemigrations promotions -n coupon_stackable && python manage.py migrate promotions",
                "Migrations for 'promotions':\n  promotions/migrations/0007_coupon_stackable.py\n    - Add field stackable to coupon\nApplying promotions.0007_coupon_stackable... OK",
            ),
            (
                "edit",
                "checkout/cart.py",
                "    def apply_coupon(self, coupon):\n        self.coupons.append(coupon)",
                "    def apply_coupon(self, coupon):\n        if self.coupons and not (coupon.stackable and all(c.stackable for c in self.coupons)):\n            raise CouponError('Only one promo code can be used per order.')\n        self.coupons.append(coupon)",
            ),
            (
                "bash",
                "pytest promotions checkout/tests/test_cart.py -q",
                "..............                                                           [100%]\n14 passed in 1.22s",
            ),
            (
                "a",
                "A second code is now rejected with 'Only one promo code can be used per order.' unless both codes are flagged stackable in the admin.",
            ),
        ],
    ),
    (
        "double-submit",
        "2026-09-01T09:40:00",
        "fix/duplicate-orders",
        [
            (
                "u",
                "we got duplicate orders again, same customer, same cart, two orders 300ms apart, card charged twice. I bet it's double clicking 'Place order'",
            ),
            (
                "bash",
                'psql tillwell -c "select id, cart_id, created_at from orders_order where cart_id = 88213"',
                "  id   | cart_id |          created_at\n-------+---------+-------------------------------\n 51220 |   88213 | 2026-08-31 19:02:11.418+00\n 51221 |   88213 | 2026-08-31 19:02:11.733+00",
            ),
            (
                "a",
                "Confirmed. Disabling the button in JS helps but isn't enough (retries, two tabs). I'll make order placement idempotent: lock the cart row and refuse if it already has an order.",
            ),
            (
                "edit",
                "checkout/services.py",
                "def place_order(cart, payment_method):\n    order = Order.objects.create_from_cart(cart)",
                "@transaction.atomic\ndef place_order(cart, payment_method):\n    cart = Cart.objects.select_for_update().get(pk=cart.pk)\n    if cart.order_id:\n        return cart.order  # second submit: return the existing order\n    order = Order.objects.create_from_cart(cart)",
            ),
            (
                "edit",
                "orders/models.py",
                "    cart = models.ForeignKey('checkout.Cart', on_delete=models.PROTECT)",
                "    cart = models.OneToOneField('checkout.Cart', on_delete=models.PROTECT)",
            ),
            (
                "bash",
                "python manage.py makemigrations orders && python manage.py migrate orders",
                'django.db.utils.IntegrityError: could not create unique index "orders_order_cart_id_key"\nDETAIL:  Key (cart_id)=(88213) is duplicated.',
                True,
            ),
            (
                "a",
                "The existing duplicates block the unique constraint. I'll add a data migration that cancels the newer duplicate of each pair before the constraint.",
            ),
            (
                "bash",
                "python manage.py migrate orders",
                "Applying orders.0031_cancel_duplicate_orders... OK (17 duplicates cancelled)\nApplying orders.0032_order_cart_unique... OK",
            ),
            ("u", "also disable the button on submit, belt and braces"),
            (
                "edit",
                "templates/checkout/confirm.html",
                '<button type="submit" class="btn btn-primary">',
                '<button type="submit" class="btn btn-primary" onclick="this.disabled=true;this.form.submit();">',
            ),
        ],
    ),
    (
        "partial-refund",
        "2026-09-09T14:10:00",
        "feature/refunds",
        [
            (
                "u",
                "customer service needs to refund single items from an order in the admin, not the whole order",
            ),
            (
                "read",
                "orders/admin.py",
                "@admin.register(Order)\nclass OrderAdmin(admin.ModelAdmin):\n    list_display = ('id', 'customer', 'status', 'total')\n    actions = ['refund_full']\n",
            ),
            (
                "write",
                "orders/refunds.py",
                "def refund_lines(order, line_ids, reason):\n    lines = order.lines.filter(pk__in=line_ids, refunded=False)\n    amount = sum(l.gross for l in lines)\n    stripe.Refund.create(payment_intent=order.payment_intent, amount=int(amount * 100), metadata={'reason': reason})\n    lines.update(refunded=True)\n    order.log(f'refunded {len(lines)} line(s), {amount} EUR: {reason}')\n    return amount\n",
            ),
            (
                "edit",
                "orders/admin.py",
                "    actions = ['refund_full']",
                "    actions = ['refund_full']\n    inlines = [OrderLineRefundInline]\n    change_form_template = 'admin/orders/order/change_form_refund.html'",
            ),
            (
                "bash",
                "pytest orders/tests/test_refunds.py -q",
                "E   stripe.error.InvalidRequestError: Amount must be no more than 59.97\n1 failed, 2 passed",
                True,
            ),
            (
                "a",
                "The test refunded a line that includes shipping; the refundable amount must exclude shipping already refunded. Capping at payment_intent.amount_received - amount_refunded.",
            ),
            (
                "bash",
                "pytest orders/tests/test_refunds.py -q",
                "...                                                                      [100%]\n3 passed in 0.88s",
            ),
        ],
    ),
    (
        "migration-null",
        "2026-08-21T17:05:00",
        "feature/loyalty",
        [
            (
                "u",
                'deploy to staging broke: migration for the loyalty points column blew up. log attached below\n\npsycopg.errors.NotNullViolation: column "loyalty_tier" of relation "accounts_customer" contains null values',
            ),
            (
                "read",
                "accounts/migrations/0042_customer_loyalty_tier.py",
                "class Migration(migrations.Migration):\n    dependencies = [('accounts', '0041_customer_marketing_opt_in')]\n    operations = [\n        migrations.AddField('customer', 'loyalty_tier', models.CharField(max_length=16)),\n    ]\n",
            ),
            (
                "a",
                "A non-null column without a default on a table with 40k rows. Locally the DB was empty so it passed. I'll split it into three: add nullable, backfill 'bronze', then set NOT NULL.",
            ),
            (
                "write",
                "accounts/migrations/0042_customer_loyalty_tier.py",
                "class Migration(migrations.Migration):\n    dependencies = [('accounts', '0041_customer_marketing_opt_in')]\n    operations = [migrations.AddField('customer', 'loyalty_tier', models.CharField(max_length=16, null=True))]\n",
            ),
            (
                "write",
                "accounts/migrations/0043_backfill_loyalty_tier.py",
                "def forwards(apps, schema_editor):\n    Customer = apps.get_model('accounts', 'Customer')\n    Customer.objects.filter(loyalty_tier__isnull=True).update(loyalty_tier='bronze')\n\n\nclass Migration(migrations.Migration):\n    dependencies = [('accounts', '0042_customer_loyalty_tier')]\n    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]\n",
            ),
            (
                "write",
                "accounts/migrations/0044_loyalty_tier_not_null.py",
                "class Migration(migrations.Migration):\n    dependencies = [('accounts', '0043_backfill_loyalty_tier')]\n    operations = [migrations.AlterField('customer', 'loyalty_tier', models.CharField(max_length=16, default='bronze'))]\n",
            ),
            (
                "bash",
                "pg_restore -d tillwell_stagingcopy dumps/staging-2026-08-21.dump && DATABASE_URL=postgres:///tillwell_stagingcopy python manage.py migrate accounts",
                "Applying accounts.0042_customer_loyalty_tier... OK\nApplying accounts.0043_backfill_loyalty_tier... OK\nApplying accounts.0044_loyalty_tier_not_null... OK",
            ),
            (
                "a",
                "Migrated cleanly against a copy of the staging dump. Since 0042 never applied on staging, rewriting it is safe.",
            ),
        ],
    ),
    (
        "n-plus-one",
        "2026-08-24T10:30:00",
        "perf/category-page",
        [
            (
                "u",
                "the category page takes 4 seconds for 'Kitchen' (~600 products). debug toolbar says 1,214 SQL queries",
            ),
            (
                "read",
                "catalog/views.py",
                "class CategoryView(ListView):\n    paginate_by = 48\n\n    def get_queryset(self):\n        return Product.objects.filter(category__slug=self.kwargs['slug'], active=True)\n",
            ),
            (
                "grep",
                "product\\.",
                'templates/catalog/_product_card.html:4:  <img src="{{ product.images.first.thumbnail_url }}">\ntemplates/catalog/_product_card.html:7:  {{ product.brand.name }}\ntemplates/catalog/_product_card.html:9:  {% if product.stock.available %}',
            ),
            (
                "a",
                "Classic N+1: brand, stock and images are fetched per card. select_related for the FKs and a Prefetch for images ordered by position.",
            ),
            (
                "edit",
                "catalog/views.py",
                "        return Product.objects.filter(category__slug=self.kwargs['slug'], active=True)",
                "        images = Prefetch('images', queryset=ProductImage.objects.order_by('position'))\n        return (Product.objects.filter(category__slug=self.kwargs['slug'], active=True)\n                .select_related('brand', 'stock').prefetch_related(images))",
            ),
            (
                "edit",
                "templates/catalog/_product_card.html",
                "{{ product.images.first.thumbnail_url }}",
                "{{ product.images.all.0.thumbnail_url }}",
            ),
            (
                "bash",
                "pytest catalog/tests/test_category_queries.py -q",
                "E   AssertionError: 7 != 5 : 7 queries executed, 5 expected\n1 failed",
                True,
            ),
            (
                "a",
                "Two extra queries are the pagination count and the session; updating assertNumQueries to 7, which is constant regardless of product count.",
            ),
            (
                "bash",
                "pytest catalog/tests/test_category_queries.py -q",
                ".                                                                        [100%]\n1 passed in 0.52s",
            ),
            ("u", "page is ~180ms now. 🎉"),
        ],
    ),
    (
        "orders-index",
        "2026-09-03T11:00:00",
        "perf/admin-orders",
        [
            (
                "u",
                "admin order list filtered by status 'paid' and sorted by date is super slow since we passed 500k orders",
            ),
            (
                "bash",
                "psql tillwell -c \"EXPLAIN ANALYZE SELECT * FROM orders_order WHERE status='paid' ORDER BY created_at DESC LIMIT 100\"",
                "Limit  (cost=0.00..48211.90 rows=100) (actual time=2841.223..2841.301 rows=100 loops=1)\n  ->  Seq Scan on orders_order  (rows=512331)\n        Filter: ((status)::text = 'paid'::text)\nExecution Time: 2841.5 ms",
            ),
            (
                "edit",
                "orders/models.py",
                "    class Meta:\n        ordering = ['-created_at']",
                "    class Meta:\n        ordering = ['-created_at']\n        indexes = [models.Index(fields=['status', '-created_at'], name='order_status_created_idx')]",
            ),
            (
                "bash",
                "python manage.py makemigrations orders -n order_status_created_idx",
                "orders/migrations/0033_order_status_created_idx.py\n    - Create index order_status_created_idx on field(s) status, -created_at of model order",
            ),
            (
                "a",
                "On a 500k-row table a plain CREATE INDEX locks writes. I'll switch the migration to AddIndexConcurrently with atomic = False.",
            ),
            (
                "edit",
                "orders/migrations/0033_order_status_created_idx.py",
                "    operations = [\n        migrations.AddIndex(",
                "    atomic = False\n    operations = [\n        AddIndexConcurrently(",
            ),
            (
                "bash",
                "python manage.py migrate orders && psql tillwell -c \"EXPLAIN ANALYZE SELECT * FROM orders_order WHERE status='paid' ORDER BY created_at DESC LIMIT 100\"",
                "Applying orders.0033_order_status_created_idx... OK\nLimit  (actual time=0.041..0.212 rows=100 loops=1)\n  ->  Index Scan using order_status_created_idx on orders_order\nExecution Time: 0.3 ms",
            ),
        ],
    ),
    (
        "fulltext-search",
        "2026-08-28T13:45:00",
        "feature/search",
        [
            (
                "u",
                "the shop search is just icontains on the name. can we do proper search over name+description with ranking, on postgres?",
            ),
            (
                "read",
                "catalog/search.py",
                "def search(q):\n    return Product.objects.filter(name__icontains=q, active=True)[:50]\n",
            ),
            (
                "write",
                "catalog/search.py",
                "from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVector\n\nVECTOR = SearchVector('name', weight='A', config='german') + SearchVector('description', weight='B', config='german')\n\n\ndef search(q):\n    query = SearchQuery(q, config='german', search_type='websearch')\n    return (Product.objects.filter(active=True).annotate(rank=SearchRank(VECTOR, query))\n            .filter(rank__gt=0.05).order_by('-rank')[:50])\n",
            ),
            (
                "bash",
                "python manage.py shell -c \"from catalog.search import search; print([p.name for p in search('kaffeemühle')][:5])\"",
                "['Kaffeemühle Hario Skerton', 'Elektrische Kaffeemühle Graef CM 800', 'Kaffeemühlen-Reinigungstabs']",
            ),
            ("u", "nice but typos like 'kafemühle' give nothing"),
            (
                "a",
                "Full-text has no fuzzy matching. I'll add a pg_trgm TrigramSimilarity fallback on name when the ranked search returns nothing.",
            ),
            (
                "write",
                "catalog/migrations/0019_trigram.py",
                "class Migration(migrations.Migration):\n    dependencies = [('catalog', '0018_product_description_html')]\n    operations = [TrigramExtension(), migrations.AddIndex('product', GinIndex(fields=['name'], opclasses=['gin_trgm_ops'], name='product_name_trgm'))]\n",
            ),
            (
                "bash",
                "python manage.py migrate catalog && python manage.py shell -c \"from catalog.search import search; print([p.name for p in search('kafemühle')][:3])\"",
                "Applying catalog.0019_trigram... OK\n['Kaffeemühle Hario Skerton', 'Elektrische Kaffeemühle Graef CM 800']",
            ),
        ],
    ),
    (
        "unaccent",
        "2026-09-15T09:20:00",
        "feature/search",
        [
            (
                "u",
                "french customers type 'creme brulee torch' and find nothing because products are named 'Crème brûlée'. make search ignore accents",
            ),
            (
                "a",
                "Postgres' unaccent extension can be put in a custom text search configuration so both the document and the query are normalised.",
            ),
            (
                "write",
                "catalog/migrations/0021_unaccent_config.py",
                'class Migration(migrations.Migration):\n    dependencies = [(\'catalog\', \'0020_product_search_vector\')]\n    operations = [\n        UnaccentExtension(),\n        migrations.RunSQL(\n            "CREATE TEXT SEARCH CONFIGURATION shop_unaccent ( COPY = german ); "\n            "ALTER TEXT SEARCH CONFIGURATION shop_unaccent ALTER MAPPING FOR hword, hword_part, word WITH unaccent, german_stem;",\n            "DROP TEXT SEARCH CONFIGURATION shop_unaccent;"),\n    ]\n',
            ),
            (
                "bash",
                "python manage.py migrate catalog",
                'django.db.utils.ProgrammingError: permission denied to create extension "unaccent"\nHINT:  Must have CREATE privilege on current database to create this extension.',
                True,
            ),
            (
                "a",
                "The app role isn't allowed to create extensions. It has to be created once by the superuser; the migration can then use CREATE EXTENSION IF NOT EXISTS, which is a no-op.",
            ),
            (
                "bash",
                "sudo -u postgres psql tillwell -c 'CREATE EXTENSION IF NOT EXISTS unaccent' && python manage.py migrate catalog",
                "CREATE EXTENSION\nApplying catalog.0021_unaccent_config... OK",
            ),
            ("edit", "catalog/search.py", "config='german'", "config='shop_unaccent'"),
            (
                "bash",
                "python manage.py shell -c \"from catalog.search import search; print([p.name for p in search('creme brulee')][:3])\"",
                "['Crème brûlée Brenner', 'Crème-brûlée-Förmchen 4er Set']",
            ),
            ("u", "add a note to the deploy runbook about the extension"),
            (
                "edit",
                "docs/runbook.md",
                "## Database",
                "## Database\n\nExtensions (`pg_trgm`, `unaccent`) must be created by the postgres superuser before `migrate`; the app role cannot.",
            ),
        ],
    ),
    (
        "ci-cache",
        "2026-08-10T08:30:00",
        "chore/ci-speed",
        [
            ("u", "the GitHub Actions test job takes 9+ minutes and most of it is pip install. speed it up"),
            (
                "read",
                ".github/workflows/test.yml",
                "jobs:\n  test:\n    runs-on: ubuntu-latest\n    services:\n      postgres:\n        image: postgres:16\n    steps:\n      - uses: actions/checkout@v4\n      - uses: actions/setup-python@v5\n        with:\n          python-version: '3.12'\n      - run: pip install -r requirements/dev.txt\n      - run: pytest\n",
            ),
            (
                "edit",
                ".github/workflows/test.yml",
                "          python-version: '3.12'\n      - run: pip install -r requirements/dev.txt\n      - run: pytest",
                "          python-version: '3.12'\n          cache: pip\n          cache-dependency-path: requirements/*.txt\n      - run: pip install -r requirements/dev.txt\n      - run: pytest -n auto --dist loadscope",
            ),
            ("bash", "git push origin chore/ci-speed && gh run watch", "✓ test in 4m12s"),
            (
                "a",
                "Down from 9m30s to 4m12s: pip cache keyed on the requirements files, and tests split over the runner's cores with xdist.",
            ),
            ("u", "why loadscope and not the default?"),
            (
                "a",
                "Several test modules share module-scoped fixtures (the catalog importer builds a 2k-product fixture once per module); loadscope keeps a module on one worker so that fixture is built once instead of per worker.",
            ),
        ],
    ),
    (
        "flaky-stock",
        "2026-08-13T15:15:00",
        "chore/ci-speed",
        [
            (
                "u",
                "since we turned on xdist, test_stock_decrement_on_order fails every few runs with an IntegrityError about duplicate key on inventory_stockmovement",
            ),
            (
                "bash",
                "pytest inventory -n 4 -p randomly -q --count=10 2>&1 | tail -5",
                'FAILED inventory/tests/test_stock.py::test_stock_decrement_on_order - django.db.utils.IntegrityError: duplicate key value violates unique constraint "inventory_stockmovement_pkey"\nDETAIL:  Key (id)=(1) already exists.\n3 failed, 117 passed',
                True,
            ),
            (
                "read",
                "inventory/tests/conftest.py",
                "@pytest.fixture(scope='session')\ndef warehouse(django_db_setup, django_db_blocker):\n    with django_db_blocker.unblock():\n        call_command('loaddata', 'warehouse.json')\n",
            ),
            (
                "a",
                "warehouse.json contains StockMovement rows with explicit primary keys 1..3, loaded once per session outside the transaction. The sequence isn't advanced, so the first insert in a test gets id=1 again — only when that test happens to run first on a worker.",
            ),
            (
                "edit",
                "inventory/tests/conftest.py",
                "@pytest.fixture(scope='session')\ndef warehouse(django_db_setup, django_db_blocker):\n    with django_db_blocker.unblock():\n        call_command('loaddata', 'warehouse.json')",
                "@pytest.fixture\ndef warehouse(db):\n    return WarehouseFactory(movements=3)",
            ),
            (
                "bash",
                "pytest inventory -n 4 -p randomly -q --count=10",
                "........................................................................ [ 60%]\n................................................                         [100%]\n120 passed in 14.80s",
            ),
            (
                "a",
                "Replaced the session-scoped fixture with a per-test factory; 10 randomised rounds on 4 workers are green.",
            ),
        ],
    ),
    (
        "coverage",
        "2026-09-05T16:00:00",
        "chore/coverage",
        [
            ("u", "set the coverage gate to 85% in CI. we're at what, 79?"),
            (
                "bash",
                "pytest --cov=. --cov-report=term-missing:skip-covered -q | tail -12",
                "checkout/cart.py               212     61    71%   88-104, 131-150, 188-201\ncheckout/shipping.py            64     22    66%   40-71\npromotions/rules.py             58     30    48%   12-55\nTOTAL                         9410   1932    79%",
            ),
            (
                "a",
                "79.5%. The biggest gaps are cart.py merge logic, shipping and promotions rules. I'll write tests for those before raising the gate.",
            ),
            (
                "write",
                "checkout/tests/test_cart_merge.py",
                "def test_anonymous_cart_merges_into_user_cart_on_login(client, customer, product):\n    ...\n\n\ndef test_merge_caps_quantity_at_stock(client, customer, product_low_stock):\n    ...\n",
            ),
            (
                "write",
                "promotions/tests/test_rules.py",
                "@pytest.mark.parametrize('subtotal,expected', [(Decimal('49.99'), False), (Decimal('50.00'), True)])\ndef test_free_shipping_threshold(subtotal, expected):\n    assert FreeShippingRule(threshold=Decimal('50')).applies(subtotal) is expected\n",
            ),
            (
                "edit",
                "pyproject.toml",
                "[tool.coverage.report]\nfail_under = 75",
                "[tool.coverage.report]\nfail_under = 85",
            ),
            (
                "bash",
                "pytest --cov=. -q | tail -2",
                "TOTAL                         9488   1398    85%\nRequired test coverage of 85% reached. Total coverage: 85.27%",
            ),
        ],
    ),
    (
        "factory-boy",
        "2026-08-31T10:10:00",
        "chore/test-factories",
        [
            (
                "u",
                "our JSON fixtures are a pain, every model change breaks 14 fixture files. move tests to factory_boy",
            ),
            (
                "bash",
                "ls */fixtures/*.json | wc -l && grep -rl 'fixtures = \\[' --include=*.py . | wc -l",
                "14\n37",
            ),
            (
                "write",
                "tests/factories.py",
                "import factory\nfrom factory.django import DjangoModelFactory\n\n\nclass CustomerFactory(DjangoModelFactory):\n    class Meta:\n        model = 'accounts.Customer'\n\n    email = factory.Sequence(lambda n: f'kunde{n}@example.test')\n    loyalty_tier = 'bronze'\n\n\nclass ProductFactory(DjangoModelFactory):\n    class Meta:\n        model = 'catalog.Product'\n\n    name = factory.Faker('word', locale='de_DE')\n    price = factory.Faker('pydecimal', left_digits=3, right_digits=2, positive=True)\n",
            ),
            (
                "bash",
                "pytest -q -x",
                "E   factory.errors.AssociatedClassError: Model 'catalog.Product' has no field 'price'\n1 error",
                True,
            ),
            (
                "a",
                "Product stores prices on ProductVariant, not Product. Adding a VariantFactory with a SubFactory to the product.",
            ),
            (
                "edit",
                "tests/factories.py",
                "    price = factory.Faker('pydecimal', left_digits=3, right_digits=2, positive=True)",
                "    variant = factory.RelatedFactory('tests.factories.VariantFactory', factory_related_name='product')",
            ),
            ("bash", "pytest -q", "412 passed in 98.41s"),
            ("u", "delete the json files then"),
            (
                "bash",
                "git rm -q */fixtures/*.json && git commit -qm 'Replace JSON fixtures with factory_boy factories' && git show --stat HEAD | tail -1",
                " 51 files changed, 402 insertions(+), 3811 deletions(-)",
            ),
        ],
    ),
    (
        "docker-slim",
        "2026-08-17T12:25:00",
        "chore/docker",
        [
            ("u", "our docker image is 1.2 GB and deploys pull it every time. shrink it"),
            ("bash", "docker images tillwell --format '{{.Tag}} {{.Size}}'", "latest 1.21GB"),
            (
                "read",
                "Dockerfile",
                "FROM python:3.12\nWORKDIR /app\nCOPY . .\nRUN apt-get update && apt-get install -y build-essential libpq-dev gettext nodejs npm\nRUN pip install -r requirements/prod.txt\nRUN npm ci && npm run build\nCMD gunicorn tillwell.wsgi\n",
            ),
            (
                "a",
                "Full python image, compilers, node and the whole source tree incl. node_modules end up in the final layer. Multi-stage: build wheels and assets in builder stages, copy only the results into python:3.12-slim.",
            ),
            (
                "write",
                "Dockerfile",
                'FROM node:20-slim AS assets\nWORKDIR /src\nCOPY package*.json ./\nRUN npm ci\nCOPY frontend frontend\nRUN npm run build\n\nFROM python:3.12 AS wheels\nCOPY requirements requirements\nRUN pip wheel -r requirements/prod.txt -w /wheels\n\nFROM python:3.12-slim\nRUN apt-get update && apt-get install -y --no-install-recommends libpq5 gettext && rm -rf /var/lib/apt/lists/*\nCOPY --from=wheels /wheels /wheels\nRUN pip install --no-cache-dir /wheels/*\nWORKDIR /app\nCOPY . .\nCOPY --from=assets /src/static/dist static/dist\nUSER 1000\nCMD ["gunicorn", "tillwell.wsgi", "-c", "gunicorn.conf.py"]\n',
            ),
            ("write", ".dockerignore", ".git\nnode_modules\n*.pyc\nmedia/\ndumps/\n"),
            (
                "bash",
                "docker build -t tillwell:slim . 2>&1 | tail -3",
                'ERROR: failed to solve: process "/bin/sh -c pip install --no-cache-dir /wheels/*" did not complete successfully\nImportError: libpq.so.5: cannot open shared object file',
                True,
            ),
            (
                "a",
                "psycopg binary wheel wasn't used because requirements pin psycopg[c]. Switching prod to psycopg[binary] avoids needing libpq headers at build time.",
            ),
            (
                "bash",
                "sed -i 's/psycopg\\[c\\]/psycopg[binary]/' requirements/prod.txt && docker build -q -t tillwell:slim . && docker images tillwell --format '{{.Tag}} {{.Size}}'",
                "slim 312MB\nlatest 1.21GB",
            ),
        ],
    ),
    (
        "celery-emails",
        "2026-08-20T09:55:00",
        "feature/async-email",
        [
            (
                "u",
                "checkout is slow because the order confirmation mail is sent synchronously through the SMTP relay (2-3 s). push it to a background worker",
            ),
            (
                "bash",
                "pip install 'celery[redis]==5.4.0'",
                "Successfully installed celery-5.4.0 kombu-5.4.2 redis-5.0.8",
            ),
            (
                "write",
                "tillwell/celery.py",
                "import os\nfrom celery import Celery\n\nos.environ.setdefault('DJANGO_SETTINGS_MODULE', 'tillwell.settings.production')\napp = Celery('tillwell')\napp.config_from_object('django.conf:settings', namespace='CELERY')\napp.autodiscover_tasks()\n",
            ),
            (
                "write",
                "orders/tasks.py",
                "@shared_task(bind=True, autoretry_for=(SMTPException,), retry_backoff=30, max_retries=5)\ndef send_order_confirmation(self, order_id):\n    order = Order.objects.get(pk=order_id)\n    OrderConfirmationEmail(order).send()\n",
            ),
            (
                "edit",
                "checkout/services.py",
                "    OrderConfirmationEmail(order).send()",
                "    transaction.on_commit(lambda: send_order_confirmation.delay(order.pk))",
            ),
            (
                "bash",
                "celery -A tillwell worker -l info",
                "[2026-08-20 10:12:03,112: ERROR/MainProcess] consumer: Cannot connect to redis://localhost:6379/0: Error 111 connecting to localhost:6379. Connection refused.",
                True,
            ),
            (
                "bash",
                "docker compose up -d redis && celery -A tillwell worker -l info --concurrency 2 & sleep 5; python manage.py shell -c 'from orders.tasks import send_order_confirmation as t; print(t.delay(51220).get(timeout=10))'",
                "[2026-08-20 10:13:40,551: INFO/ForkPoolWorker-1] Task orders.tasks.send_order_confirmation[6b1e] succeeded in 2.31s: None",
            ),
            (
                "a",
                "Emails now go through Celery after the transaction commits, with retries on SMTP errors. Note the on_commit: otherwise the worker can run before the order row is visible.",
            ),
        ],
    ),
    (
        "sentry",
        "2026-09-08T13:05:00",
        "chore/observability",
        [
            (
                "u",
                "set up Sentry for the django app and the celery workers. GDPR: no emails, addresses or card data may leave",
            ),
            (
                "bash",
                "pip install 'sentry-sdk[django,celery]==2.14.0'",
                "Successfully installed sentry-sdk-2.14.0",
            ),
            (
                "write",
                "tillwell/observability.py",
                "import sentry_sdk\n\nSCRUB = {'email', 'street', 'zip', 'phone', 'iban', 'card_last4', 'first_name', 'last_name'}\n\n\ndef _scrub(event, hint):\n    req = event.get('request', {})\n    for k in list(req.get('data') or {}):\n        if k in SCRUB:\n            req['data'][k] = '[Filtered]'\n    event.get('user', {}).pop('email', None)\n    return event\n\n\ndef init(dsn, env):\n    sentry_sdk.init(dsn=dsn, environment=env, send_default_pii=False, before_send=_scrub, traces_sample_rate=0.05)\n",
            ),
            (
                "edit",
                "tillwell/settings/production.py",
                "LOGGING = {",
                "observability.init(env('SENTRY_DSN', default=''), 'production')\n\nLOGGING = {",
            ),
            (
                "bash",
                "python manage.py shell -c \"import sentry_sdk; sentry_sdk.capture_message('sentry smoke test from tillwell')\"",
                "",
            ),
            ("u", "it arrived, and the test event with a form post shows email as [Filtered]. 👍"),
        ],
    ),
    (
        "s3-media",
        "2026-08-25T15:35:00",
        "feature/s3-media",
        [
            (
                "u",
                "product images fill the app server disk. move MEDIA to S3 (bucket tillwell-media, eu-central-1). the key for the upload user is AKIAIOSFODNN7EXAMPLE, secret is in 1password",
            ),
            (
                "a",
                "I won't write the key into settings or the repo; I'll read AWS credentials from the environment (and on the server from the instance role when possible).",
            ),
            (
                "bash",
                "pip install 'django-storages[s3]==1.14.4'",
                "Successfully installed boto3-1.35.10 django-storages-1.14.4",
            ),
            (
                "edit",
                "tillwell/settings/production.py",
                "MEDIA_ROOT = BASE_DIR / 'media'",
                "STORAGES = {\n    'default': {'BACKEND': 'storages.backends.s3.S3Storage', 'OPTIONS': {'bucket_name': 'tillwell-media', 'region_name': 'eu-central-1', 'default_acl': None, 'querystring_auth': False}},\n    'staticfiles': {'BACKEND': 'whitenoise.storage.CompressedManifestStaticFilesStorage'},\n}",
            ),
            (
                "bash",
                "aws s3 sync media/ s3://tillwell-media/ --only-show-errors",
                "upload failed: media/products/2024/9812.jpg to s3://tillwell-media/products/2024/9812.jpg An error occurred (AccessControlListNotSupported) when calling the PutObject operation: The bucket does not allow ACLs",
                True,
            ),
            (
                "a",
                "The bucket has Object Ownership = bucket owner enforced, so ACLs are rejected; `default_acl: None` handles it in Django, and for the sync I'll drop the ACL flag from the profile config.",
            ),
            (
                "bash",
                "aws s3 sync media/ s3://tillwell-media/ --only-show-errors && aws s3 ls s3://tillwell-media --recursive --summarize | tail -2",
                "Total Objects: 48211\n   Total Size: 21.4 GiB",
            ),
        ],
    ),
    (
        "htmx-cart",
        "2026-09-12T10:45:00",
        "feature/cart-ux",
        [
            (
                "u",
                "changing quantity in the cart reloads the whole page and jumps to the top. can we update just the row and the totals? no react please",
            ),
            (
                "a",
                "htmx fits: the quantity input posts to a view that returns the row partial plus an out-of-band swap for the totals box.",
            ),
            (
                "bash",
                "curl -sL https://unpkg.com/htmx.org@2.0.2/dist/htmx.min.js -o static/vendor/htmx.min.js && wc -c static/vendor/htmx.min.js",
                "50917 static/vendor/htmx.min.js",
            ),
            (
                "edit",
                "templates/checkout/_cart_row.html",
                '<input type="number" name="qty" value="{{ line.qty }}">',
                '<input type="number" name="qty" value="{{ line.qty }}" min="0"\n       hx-post="{% url \'cart:update_line\' line.pk %}" hx-trigger="change delay:300ms"\n       hx-target="closest tr" hx-swap="outerHTML">',
            ),
            (
                "write",
                "templates/checkout/_cart_update.html",
                "{% include 'checkout/_cart_row.html' %}\n<div id=\"cart-totals\" hx-swap-oob=\"true\">{% include 'checkout/_totals.html' %}</div>\n",
            ),
            (
                "bash",
                "pytest checkout/tests/test_cart_views.py -q",
                "E   django.middleware.csrf.CsrfViewMiddleware: Forbidden (CSRF token missing.)\n1 failed, 6 passed",
                True,
            ),
            (
                "edit",
                "templates/base.html",
                "<body>",
                '<body hx-headers=\'{"X-CSRFToken": "{{ csrf_token }}"}\'>',
            ),
            (
                "bash",
                "pytest checkout/tests/test_cart_views.py -q",
                ".......                                                                  [100%]\n7 passed in 1.10s",
            ),
        ],
    ),
    (
        "thumbnails",
        "2026-08-27T14:20:00",
        "feature/s3-media",
        [
            (
                "u",
                "product pages load the 4000px originals. generate thumbnails (400 and 1200 wide) on upload, webp",
            ),
            (
                "write",
                "catalog/images.py",
                "from io import BytesIO\nfrom PIL import Image\n\nSIZES = (400, 1200)\n\n\ndef make_thumbnails(fileobj):\n    img = Image.open(fileobj)\n    out = {}\n    for w in SIZES:\n        copy = img.copy()\n        copy.thumbnail((w, w * 4))\n        buf = BytesIO()\n        copy.save(buf, 'WEBP', quality=82)\n        out[w] = buf.getvalue()\n    return out\n",
            ),
            (
                "bash",
                "python manage.py regenerate_thumbnails --limit 200",
                'processed 143\nOSError: cannot write mode P as WEBP (products/2023/7719.gif)\nTraceback (most recent call last):\n  File "catalog/images.py", line 14, in make_thumbnails',
                True,
            ),
            (
                "a",
                "Palette-mode GIFs (and a few CMYK JPEGs from the supplier feed) can't be saved as WEBP directly. Converting to RGB/RGBA first, keeping alpha when present.",
            ),
            (
                "edit",
                "catalog/images.py",
                "    img = Image.open(fileobj)",
                "    img = Image.open(fileobj)\n    img = ImageOps.exif_transpose(img)\n    img = img.convert('RGBA' if 'A' in img.getbands() or img.mode == 'P' else 'RGB')",
            ),
            ("bash", "python manage.py regenerate_thumbnails", "processed 48211, skipped 0, 6m41s"),
            ("u", "phone photos were sideways before, are they fine now?"),
            (
                "a",
                "Yes, exif_transpose applies the EXIF orientation before resizing, so rotated phone uploads come out upright.",
            ),
        ],
    ),
    (
        "i18n-de",
        "2026-09-02T15:30:00",
        "feature/i18n",
        [
            (
                "u",
                "we're launching in Austria/Germany properly: make the storefront translatable and add German. start with the checkout templates",
            ),
            (
                "edit",
                "tillwell/settings/base.py",
                "LANGUAGE_CODE = 'en-us'",
                "LANGUAGE_CODE = 'en'\nLANGUAGES = [('en', 'English'), ('de', 'Deutsch')]\nLOCALE_PATHS = [BASE_DIR / 'locale']",
            ),
            ("bash", "grep -c '{% trans' templates/checkout/*.html | awk -F: '{s+=$2} END {print s}'", "3"),
            (
                "a",
                "Only 3 strings are marked. I'll wrap the checkout templates' visible strings in {% translate %}/{% blocktranslate %} and then extract.",
            ),
            (
                "bash",
                "python manage.py makemessages -l de",
                "CommandError: Can't find msguniq. Make sure you have GNU gettext tools 0.15 or newer installed.",
                True,
            ),
            (
                "bash",
                "sudo apt-get install -y gettext >/dev/null && python manage.py makemessages -l de --ignore=node_modules",
                "processing locale de",
            ),
            (
                "write",
                "locale/de/LC_MESSAGES/django.po",
                'msgid "Place order"\nmsgstr "Zahlungspflichtig bestellen"\n\nmsgid "Shipping address"\nmsgstr "Lieferadresse"\n\nmsgid "Your cart is empty."\nmsgstr "Ihr Warenkorb ist leer."\n',
            ),
            (
                "bash",
                "python manage.py compilemessages -l de",
                "processing file django.po in /home/maren/src/tillwell/locale/de/LC_MESSAGES",
            ),
            ("u", "why 'Zahlungspflichtig bestellen' and not just 'Bestellen'?"),
            (
                "a",
                "German e-commerce law (§312j BGB, the 'Button-Lösung') requires the final order button to say unambiguously that the order costs money; 'zahlungspflichtig bestellen' is the standard wording.",
            ),
        ],
    ),
    (
        "shipping-rates",
        "2026-09-10T11:35:00",
        "feature/shipping",
        [
            (
                "u",
                "replace the flat 4.90 shipping with DHL's weight table: up to 2kg 4.99, 5kg 6.99, 10kg 9.49, 31.5kg 16.49; Austria +5",
            ),
            (
                "read",
                "checkout/shipping.py",
                "FLAT_RATE = Decimal('4.90')\n\n\ndef shipping_cost(cart, country):\n    return Decimal('0') if cart.subtotal >= 50 else FLAT_RATE\n",
            ),
            (
                "write",
                "checkout/shipping.py",
                "DHL_TABLE = [(Decimal('2'), Decimal('4.99')), (Decimal('5'), Decimal('6.99')), (Decimal('10'), Decimal('9.49')), (Decimal('31.5'), Decimal('16.49'))]\nSURCHARGE = {'AT': Decimal('5.00')}\n\n\ndef shipping_cost(cart, country):\n    if cart.subtotal >= 50 and country == 'DE':\n        return Decimal('0')\n    weight = cart.total_weight_kg\n    for limit, price in DHL_TABLE:\n        if weight <= limit:\n            return price + SURCHARGE.get(country, Decimal('0'))\n    raise ShippingUnavailable(f'{weight} kg exceeds the 31.5 kg parcel limit')\n",
            ),
            (
                "bash",
                "pytest checkout/tests/test_shipping.py -q",
                "E   AttributeError: 'Cart' object has no attribute 'total_weight_kg'\n4 failed",
                True,
            ),
            (
                "edit",
                "checkout/cart.py",
                "    @property\n    def subtotal(self):",
                "    @property\n    def total_weight_kg(self):\n        return sum((l.variant.weight_g * l.qty for l in self.lines), 0) / Decimal(1000)\n\n    @property\n    def subtotal(self):",
            ),
            (
                "bash",
                "pytest checkout/tests/test_shipping.py -q",
                "........                                                                 [100%]\n8 passed in 0.58s",
            ),
            ("u", "what happens with a 40kg order then"),
            (
                "a",
                "It raises ShippingUnavailable; the checkout shows 'This order exceeds the maximum parcel weight, please contact us'. Splitting into several parcels is not implemented.",
            ),
        ],
    ),
    (
        "csv-export",
        "2026-09-16T16:20:00",
        "feature/admin-export",
        [
            ("u", "accounting wants an 'export to CSV' in the order admin. they open it in Excel"),
            (
                "write",
                "orders/export.py",
                "import csv\n\nHEADER = ['Bestellnr', 'Datum', 'Kunde', 'Netto', 'MwSt', 'Brutto', 'Status']\n\n\ndef export_orders_csv(modeladmin, request, queryset):\n    resp = HttpResponse(content_type='text/csv; charset=utf-8')\n    resp['Content-Disposition'] = 'attachment; filename=\"bestellungen.csv\"'\n    w = csv.writer(resp, delimiter=';')\n    w.writerow(HEADER)\n    for o in queryset.select_related('customer'):\n        w.writerow([o.number, o.created_at.date(), o.customer.full_name, o.net, o.vat, o.total, o.get_status_display()])\n    return resp\n",
            ),
            ("u", "Excel shows 'MÃ¼ller' instead of 'Müller' and all amounts are in one column"),
            (
                "a",
                "Excel assumes the local ANSI code page unless the file starts with a UTF-8 BOM. The semicolon delimiter is right for German Excel, but decimals need a comma too.",
            ),
            (
                "edit",
                "orders/export.py",
                "    w = csv.writer(resp, delimiter=';')",
                "    resp.write('\\ufeff')  # BOM so Excel detects UTF-8\n    w = csv.writer(resp, delimiter=';')",
            ),
            ("edit", "orders/export.py", "o.net, o.vat, o.total", "_de(o.net), _de(o.vat), _de(o.total)"),
            (
                "bash",
                "pytest orders/tests/test_export.py -q",
                "..                                                                       [100%]\n2 passed in 0.37s",
            ),
        ],
    ),
    (
        "django-upgrade",
        "2026-09-19T09:00:00",
        "chore/django-5.1",
        [
            ("u", "upgrade us from Django 4.2 to 5.1 before the LTS question comes up. go step by step"),
            (
                "bash",
                "python -Wd manage.py check 2>&1 | grep -i deprecat | sort | uniq -c",
                "      1 RemovedInDjango50Warning: The DEFAULT_FILE_STORAGE setting is deprecated. Use STORAGES instead.\n      3 RemovedInDjango51Warning: The 'index_together' option is deprecated\n      1 RemovedInDjango50Warning: The USE_L10N setting is deprecated",
            ),
            ("edit", "tillwell/settings/base.py", "USE_L10N = True\n", ""),
            (
                "grep",
                "index_together",
                "catalog/models.py:61:        index_together = [('category', 'active')]\norders/models.py:88:        index_together = [('customer', 'status')]\ninventory/models.py:23:        index_together = [('warehouse', 'sku')]",
            ),
            (
                "bash",
                "sed -i \"s/index_together = \\[('\\(.*\\)', '\\(.*\\)')\\]/indexes = [models.Index(fields=['\\1', '\\2'])]/\" catalog/models.py orders/models.py inventory/models.py && python manage.py makemigrations",
                "Migrations for 'catalog': 0022_rename_index_together\n  - Rename unnamed index for ('category', 'active') on product to catalog_pro_categor_5f1e2a_idx",
            ),
            (
                "bash",
                "pip install 'Django==5.1.1' && pytest -q -x",
                "E   ImportError: cannot import name 'DEFAULT_STORAGE_ALIAS' from 'storages.backends.s3'\n1 error",
                True,
            ),
            (
                "a",
                "django-storages 1.14.4 is fine with 5.1; the error comes from our own shim in tillwell/storage_compat.py that imports a private name. Since STORAGES is already used in production settings, the shim can go.",
            ),
            (
                "bash",
                "git rm -q tillwell/storage_compat.py && pytest -q",
                "412 passed, 2 warnings in 101.20s",
            ),
            ("u", "what are the 2 warnings?"),
            (
                "a",
                "Both come from django-debug-toolbar 4.3 (a URL pattern check). Upgrading to 4.4 removes them; I'll do that in the same branch.",
            ),
        ],
    ),
    (
        "api-throttle",
        "2026-09-22T13:40:00",
        "fix/api-abuse",
        [
            (
                "u",
                "some bot hammers /api/cart/add/ 50 times a second, tries to reserve all stock of the limited edition sneaker. rate limit the cart API",
            ),
            (
                "read",
                "tillwell/settings/base.py",
                "REST_FRAMEWORK = {\n    'DEFAULT_AUTHENTICATION_CLASSES': ['rest_framework.authentication.SessionAuthentication'],\n}\n",
            ),
            (
                "edit",
                "tillwell/settings/base.py",
                "REST_FRAMEWORK = {\n    'DEFAULT_AUTHENTICATION_CLASSES': ['rest_framework.authentication.SessionAuthentication'],\n}",
                "REST_FRAMEWORK = {\n    'DEFAULT_AUTHENTICATION_CLASSES': ['rest_framework.authentication.SessionAuthentication'],\n    'DEFAULT_THROTTLE_RATES': {'cart': '20/min', 'cart_burst': '5/sec'},\n}",
            ),
            (
                "edit",
                "api/views/cart.py",
                "class CartAddView(APIView):",
                "class CartAddView(APIView):\n    throttle_classes = [ScopedRateThrottle, CartBurstThrottle]\n    throttle_scope = 'cart'",
            ),
            (
                "bash",
                "for i in $(seq 1 8); do curl -s -o /dev/null -w '%{http_code} ' -X POST localhost:8000/api/cart/add/ -d sku=SNK-LTD-42; done",
                "201 201 201 201 201 429 429 429",
            ),
            ("u", "but behind the load balancer, isn't everyone the same IP?"),
            (
                "a",
                "Yes — DRF uses REMOTE_ADDR unless NUM_PROXIES is set. With NUM_PROXIES=1 it takes the client IP from X-Forwarded-For.",
            ),
            (
                "edit",
                "tillwell/settings/base.py",
                "    'DEFAULT_THROTTLE_RATES'",
                "    'NUM_PROXIES': 1,\n    'DEFAULT_THROTTLE_RATES'",
            ),
        ],
    ),
    (
        "newsletter-optin",
        "2026-09-24T10:25:00",
        "feature/newsletter",
        [
            (
                "u",
                "newsletter signup must be double opt-in (GDPR): send a confirmation link, only subscribe after click, link valid 48h. no extra table for tokens if possible",
            ),
            (
                "write",
                "newsletter/tokens.py",
                "from django.core import signing\n\nSALT = 'newsletter-confirm'\nMAX_AGE = 48 * 3600\n\n\ndef make_token(email):\n    return signing.TimestampSigner(salt=SALT).sign_object({'e': email})\n\n\ndef read_token(token):\n    return signing.TimestampSigner(salt=SALT).unsign_object(token, max_age=MAX_AGE)['e']\n",
            ),
            (
                "write",
                "newsletter/views.py",
                "def confirm(request, token):\n    try:\n        email = read_token(token)\n    except signing.SignatureExpired:\n        return render(request, 'newsletter/expired.html', status=410)\n    except signing.BadSignature:\n        raise Http404\n    Subscriber.objects.update_or_create(email=email, defaults={'confirmed_at': timezone.now(), 'ip': client_ip(request)})\n    return render(request, 'newsletter/confirmed.html')\n",
            ),
            ("bash", "pytest newsletter -q", "F..\nE   AssertionError: 404 != 410\n1 failed, 2 passed", True),
            (
                "a",
                "SignatureExpired is a subclass of BadSignature; the order of except clauses is right, but the test used freeze_time without tick and the signer's clock... actually the test built the token with a different salt. Fixing the test to use make_token().",
            ),
            (
                "bash",
                "pytest newsletter -q",
                "...                                                                      [100%]\n3 passed in 0.44s",
            ),
            ("u", "good. log the confirmation IP + time, that's what the lawyer wants as proof"),
            ("a", "Already stored: Subscriber.confirmed_at and Subscriber.ip are set at confirmation."),
        ],
    ),
    (
        "oauth-token-github",
        "2026-09-26T08:15:00",
        "chore/release",
        [
            (
                "u",
                "set up the release workflow to create a GitHub release and push the image to ghcr.io when I tag vX.Y.Z. for local testing with act I have this token: ghp_R2d2C3poB8bY5wingXw1ngLuk3Sky3Walk3r",
            ),
            (
                "a",
                "I won't store that token anywhere in the repo; for act, pass it with `-s GITHUB_TOKEN` from your shell. In Actions the built-in GITHUB_TOKEN with packages: write is enough.",
            ),
            (
                "write",
                ".github/workflows/release.yml",
                "on:\n  push:\n    tags: ['v*.*.*']\npermissions:\n  contents: write\n  packages: write\njobs:\n  release:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - uses: docker/login-action@v3\n        with:\n          registry: ghcr.io\n          username: ${{ github.actor }}\n          password: ${{ secrets.GITHUB_TOKEN }}\n      - uses: docker/build-push-action@v6\n        with:\n          push: true\n          tags: ghcr.io/tillwell/shop:${{ github.ref_name }}\n      - run: gh release create ${{ github.ref_name }} --generate-notes\n        env:\n          GH_TOKEN: ${{ github.token }}\n",
            ),
            (
                "bash",
                "act push -e .github/act/tag.json -s GITHUB_TOKEN --dryrun",
                "*DRYRUN* [release/release] ✅  Success - Main actions/checkout@v4\n*DRYRUN* [release/release] ✅  Success - Main docker/build-push-action@v6\n*DRYRUN* [release/release] 🏁  Job succeeded",
            ),
            ("u", "tag names must be lowercase for ghcr right? ours are fine"),
            ("a", "Image names must be lowercase; tags like v1.4.0 are fine as is."),
        ],
    ),
]

QUERIES = [
    # paraphrase: what was asked
    (
        "limit how many times someone can get the password wrong before the account is blocked",
        "lockout",
        "paraphrase",
    ),
    (
        "we tried making CI automatically retry the intermittently failing login test",
        "flaky-login-rerun",
        "paraphrase",
    ),
    ("when did we finally fix the flaky login redirect test for real", "flaky-login-fix", "outcome"),
    ("forgot-password email links were not https", "reset-https", "paraphrase"),
    ("add Google sign-in button to the login page", "google-login", "paraphrase"),
    ("customers appear logged out when they come back from the payment provider", "samesite", "paraphrase"),
    (
        "payment webhooks from stripe were all rejected and orders never got marked paid",
        "stripe-signature",
        "paraphrase",
    ),
    ("invoice tax total off by one cent", "vat-rounding", "paraphrase"),
    ("stop customers from combining two discount codes", "coupon-stacking", "paraphrase"),
    ("customer charged twice because the order got created two times", "double-submit", "paraphrase"),
    ("let support refund individual items instead of the whole order", "partial-refund", "paraphrase"),
    ("category listing page was very slow with too many database queries", "n-plus-one", "paraphrase"),
    ("make product search ignore accents like é and û", "unaccent", "paraphrase"),
    ("make the GitHub Actions pipeline faster", "ci-cache", "paraphrase"),
    ("get the test suite above 85 percent coverage", "coverage", "paraphrase"),
    ("shrink the docker image size", "docker-slim", "paraphrase"),
    (
        "send the order confirmation email in the background instead of during checkout",
        "celery-emails",
        "paraphrase",
    ),
    ("translate the storefront into German", "i18n-de", "paraphrase"),
    ("GDPR compliant newsletter signup with confirmation link", "newsletter-optin", "paraphrase"),
    ("bot reserving all the stock through the cart api", "api-throttle", "paraphrase"),
    # detail: a file, command, error gist
    (
        "SignatureVerificationError because the body was re-encoded with json.dumps",
        "stripe-signature",
        "detail",
    ),
    ("ROUND_HALF_UP Decimal quantize for tax", "vat-rounding", "detail"),
    ("select_for_update on the cart and OneToOne between order and cart", "double-submit", "detail"),
    ("permission denied to create extension", "unaccent", "detail"),
    ("pg_trgm trigram similarity so misspelled searches still match", "fulltext-search", "detail"),
    ("duplicate key on stock movement primary key under pytest-xdist", "flaky-stock", "detail"),
    ("AddIndexConcurrently for status and created_at on orders", "orders-index", "detail"),
    ("cannot write mode P as WEBP", "thumbnails", "detail"),
    ("msguniq not found, had to install gettext", "i18n-de", "detail"),
    ("UTF-8 BOM so Excel shows umlauts correctly", "csv-export", "detail"),
    ("index_together deprecation replaced by Meta.indexes", "django-upgrade", "detail"),
    ("redis connection refused when starting the celery worker", "celery-emails", "detail"),
    ("Object ownership bucket does not allow ACLs error during aws s3 sync", "s3-media", "detail"),
    ("hx-swap-oob for the cart totals and csrf header on body", "htmx-cart", "detail"),
    ("SESSION_COOKIE_SAMESITE Strict changed to Lax", "samesite", "detail"),
    ("TimestampSigner token valid for 48 hours", "newsletter-optin", "detail"),
    # outcome
    (
        "the session where the loyalty tier migration failed on staging because of null values",
        "migration-null",
        "outcome",
    ),
    ("the time the docker build failed because libpq.so.5 was missing", "docker-slim", "outcome"),
    ("when CI went from about nine minutes to four", "ci-cache", "outcome"),
    ("we replayed the stuck pending orders with a management command", "stripe-signature", "outcome"),
    ("category page went down to around 180 ms", "n-plus-one", "outcome"),
    ("the attempt where Ilse objected and we reverted the retry plugin", "flaky-login-rerun", "outcome"),
    ("the allauth SocialApp DoesNotExist error during the social login setup", "google-login", "outcome"),
    ("orders admin query from 2.8 seconds down to under a millisecond", "orders-index", "outcome"),
    # file
    ("accounts/lockout.py", "lockout", "file"),
    ("the session that touched accounts/middleware.py", "flaky-login-fix", "file"),
    ("who edited tillwell/observability.py", "sentry", "file"),
    ("tests/factories.py was created when", "factory-boy", "file"),
    ("changes to checkout/shipping.py for weight based prices", "shipping-rates", "file"),
    ("release.yml workflow pushing images to ghcr", "oauth-token-github", "file"),
    ("promotions/models.py stackable flag", "coupon-stacking", "file"),
    ("orders/refunds.py", "partial-refund", "file"),
]
