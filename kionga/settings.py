"""Django settings: everything comes from the environment (see docs/configuration.md).

With nothing set the project talks to the embedded PostgreSQL that ``bin/demo``
starts (kionga.embedded_postgres) and to Redis on localhost.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import dj_database_url
from csp.constants import NONE, SELF, UNSAFE_INLINE
from django.core.exceptions import ImproperlyConfigured

from contracts.registry import CEILINGS
from kionga import embedded_postgres, oidc_group_roles, otlp_egress, quantities
from kionga.api_tags import TAGS as API_TAGS
from kionga.log_filters import CELERY_TASK_LOGGERS
from kionga.proxies import trusted_proxies
from kionga.redis_client import connection_kwargs
from runner.env import Env
from runner.redact import DEFAULT_SECRET_PATTERNS
from runner.settings import DEFAULT_MAX_RUNS

# One strict reader for gateway and runner (runner.env): NAME_FILE variants, loud errors.
env = Env()
BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"

# The dev default is deliberately recognisable; kionga.checks warns about it
# when DEBUG is off so it never reaches production unnoticed.
DEV_SECRET_KEY = "dev-insecure-kionga-secret-key-change-me"
SECRET_KEY = env.text("DJANGO_SECRET_KEY", DEV_SECRET_KEY)
DEBUG = env.boolean("DJANGO_DEBUG", False)
# Never "*" by default: a deployment names its host (bin/demo and tests use loopback).
ALLOWED_HOSTS = env.strings("DJANGO_ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.strings("DJANGO_CSRF_TRUSTED_ORIGINS")
# Off by default because the quick start is plain http://127.0.0.1.
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env.boolean("DJANGO_SECURE_COOKIES", False)

# HTTPS behind the documented TLS proxy (docs/operations.md): the proxy sets this
# header (e.g. X-Forwarded-Proto: https) and strips it from clients' requests.
_PROXY_SSL_HEADER = env.text("DJANGO_SECURE_PROXY_SSL_HEADER", "")
if _PROXY_SSL_HEADER:
    SECURE_PROXY_SSL_HEADER = ("HTTP_" + _PROXY_SSL_HEADER.upper().replace("-", "_"), "https")
SECURE_SSL_REDIRECT = env.boolean("DJANGO_SSL_REDIRECT", False)
# Probes call the listener directly over plain HTTP.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
# HSTS (sent on HTTPS answers only): the admin, the API docs and every other page.
SECURE_HSTS_SECONDS = env.integer("DJANGO_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.boolean("DJANGO_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env.boolean("DJANGO_HSTS_PRELOAD", True)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    # ReDoc's and Swagger UI's JavaScript from our own static files, never a CDN.
    "drf_spectacular_sidecar",
    "axes",
    "kionga",
    "designs",
    "deployments",
    "runs",
    "evaluations",
    "approvals",
    # The canvas (pages + built assets); it talks to the apps only through the API.
    "designer",
    "operations",
    # Webhooks and schedules that start deployed agents' turns; schedules are
    # django-celery-beat rows, read by beat's DatabaseScheduler.
    "django_celery_beat",
    "triggers",
]

MIDDLEWARE = [
    # Outermost, so every 4xx/5xx of an /api/ route (unknown URL, CSRF, crash)
    # passes through it and leaves as JSON.
    "kionga.middleware.ApiJsonErrorMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "kionga.csp_header.PolicyOnceMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Requests refused before any view (a body too large or too slow, a NUL in the
    # URL): after the host check and inside the header middleware, on every route.
    "kionga.middleware.RequestRefusals",
    # Sign-in lockouts and slowdown (django-axes, kionga.sign_in); last but the
    # sync-only chain marker.
    "kionga.sign_in.TrustedBrowserMiddleware",
    "axes.middleware.AxesMiddleware",
    "kionga.middleware.SyncChainMiddleware",
]

# Pages that need a person send others to the sign-in at / (the designer's and the
# approver UI's pages to their own); after any sign-in without a safe `next`: the designer.
LOGIN_URL = "home"
LOGIN_REDIRECT_URL = "designer:home"

AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
    # Sign-in through the company's OpenID Connect provider (kionga.oidc); it answers
    # only the provider's callback, and only while KIONGA_OIDC_ISSUER is set.
    "kionga.oidc_backend.ProviderBackend",
]

# OpenID Connect sign-in (kionga.oidc, docs/decisions/oidc-sign-in.md): off while the
# issuer is empty. Endpoints come from the issuer's discovery document.
KIONGA_OIDC_ISSUER = env.text("KIONGA_OIDC_ISSUER", "").rstrip("/")
KIONGA_OIDC_PROVIDER_NAME = env.text("KIONGA_OIDC_PROVIDER_NAME", "single sign-on")
KIONGA_OIDC_REQUIRE_VERIFIED_EMAIL = env.boolean("KIONGA_OIDC_REQUIRE_VERIFIED_EMAIL", True)
KIONGA_OIDC_GROUPS_CLAIM = env.text("KIONGA_OIDC_GROUPS_CLAIM", "groups")
# GROUP=PROJECT_SLUG:ROLE items (kionga.oidc_group_roles; docs/decisions/oidc-group-roles.md).
KIONGA_OIDC_GROUP_ROLES = oidc_group_roles.parse(env.strings("KIONGA_OIDC_GROUP_ROLES"))
# A session signed in through the provider ends after this; the next sign-in asks the
# provider again, so a person it removed or disabled is out by then.
KIONGA_OIDC_SESSION_HOURS = env.integer("KIONGA_OIDC_SESSION_HOURS", 12, within=(1, 720))
# mozilla-django-oidc's own settings, from ours.
OIDC_RP_CLIENT_ID = env.text("KIONGA_OIDC_CLIENT_ID", "")
OIDC_RP_CLIENT_SECRET = env.text("KIONGA_OIDC_CLIENT_SECRET", "")
OIDC_RP_SCOPES = env.text("KIONGA_OIDC_SCOPES", "openid email profile")
OIDC_RP_SIGN_ALGO = env.text("KIONGA_OIDC_SIGN_ALGORITHM", "RS256")
OIDC_USE_PKCE = True
OIDC_TIMEOUT = 10
OIDC_CREATE_USER = True

# Invitations by email (kionga.invitation_mail, docs/decisions/invitation-links.md): the
# links in them start with KIONGA_PUBLIC_URL; a set-password link lasts as long as an
# invitation (7 days), and works once. Sent with Django's email backend: the console
# (the worker's log) unless DJANGO_EMAIL_BACKEND names another (SMTP: the EMAIL_* below).
KIONGA_PUBLIC_URL = env.text("KIONGA_PUBLIC_URL", "http://127.0.0.1:8000").rstrip("/")
KIONGA_INVITATION_LIFETIME = timedelta(days=7)
PASSWORD_RESET_TIMEOUT = int(KIONGA_INVITATION_LIFETIME.total_seconds())
EMAIL_BACKEND = env.text("DJANGO_EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
EMAIL_HOST = env.text("DJANGO_EMAIL_HOST", "localhost")
EMAIL_PORT = env.integer("DJANGO_EMAIL_PORT", 25, within=(1, 65535))
EMAIL_HOST_USER = env.text("DJANGO_EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env.text("DJANGO_EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env.boolean("DJANGO_EMAIL_USE_TLS", False)
EMAIL_TIMEOUT = 10
DEFAULT_FROM_EMAIL = env.text("DJANGO_DEFAULT_FROM_EMAIL", "kionga@localhost")

# Proxies whose X-Forwarded-For names the client (kionga.proxies): addresses or
# networks; empty = trust none, the client is the connection's peer.
KIONGA_TRUSTED_PROXIES = trusted_proxies(env.strings("KIONGA_TRUSTED_PROXIES"))

# Sign-in failures (django-axes with kionga.sign_in; docs/decisions/sign-in-lockouts.md).
# A user name is locked only from the address that failed it: after
# KIONGA_LOGIN_FAILURE_LIMIT failures of one name from one address, that pair is refused
# for the cool-off. Many failures from one address, whatever the names, slow it down
# instead: past KIONGA_LOGIN_ADDRESS_FAILURES in the cool-off, its next sign-in waits
# 1 s, then 2, 4 ... at most KIONGA_LOGIN_SLOWDOWN_MAX_SECONDS (429 with Retry-After).
AXES_FAILURE_LIMIT = env.integer("KIONGA_LOGIN_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = timedelta(minutes=env.integer("KIONGA_LOGIN_COOLOFF_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_CLIENT_IP_CALLABLE = "kionga.proxies.client_address"
AXES_HANDLER = "kionga.sign_in.SignInHandler"
AXES_LOCKOUT_CALLABLE = "kionga.sign_in.refusal"
AXES_RESET_ON_SUCCESS = True
AXES_VERBOSE = False
KIONGA_LOGIN_ADDRESS_FAILURES = env.integer("KIONGA_LOGIN_ADDRESS_FAILURES", 10,
                                            within=(1, 10_000))
KIONGA_LOGIN_SLOWDOWN_MAX_SECONDS = env.integer("KIONGA_LOGIN_SLOWDOWN_MAX_SECONDS", 30,
                                                within=(1, 300))

# Content Security Policy for every answer (django-csp): the admin, the API docs and
# any other HTML page load only our own scripts. ReDoc needs inline styles (it
# generates them), blob: workers and data: images.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF, UNSAFE_INLINE],
        "img-src": [SELF, "data:"],
        "font-src": [SELF, "data:"],
        "worker-src": [SELF, "blob:"],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}

ROOT_URLCONF = "kionga.urls"
ASGI_APPLICATION = "kionga.asgi.application"
# No trailing-slash redirects: API clients POSTing to a redirect lose the body.
APPEND_SLASH = False

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                # The product's pages for the headers of the server-rendered pages.
                "kionga.site.context",
            ],
        },
    },
]


# PostgreSQL only (the one SQL dialect of the code); unset: bin/demo's embedded server.
DATABASES = {
    "default": dj_database_url.parse(env.text("DATABASE_URL") or embedded_postgres.url()),
}
if DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
    raise ImproperlyConfigured("DATABASE_URL must be a PostgreSQL URL (postgres://...)")
# The database away: a request waits this long for a connection, then answers 503
# service_unavailable (kionga.database); one connection attempt takes no longer
# (libpq's connect_timeout; it counts 2 s at least).
KIONGA_DB_CONNECT_TIMEOUT = env.integer("KIONGA_DB_CONNECT_TIMEOUT", 3, within=(2, 60))
DATABASES["default"].setdefault("OPTIONS", {})["connect_timeout"] = KIONGA_DB_CONNECT_TIMEOUT
# A connection pool, not persistent connections: under ASGI every request runs in
# a thread of its own, and a new PostgreSQL connection per request costs more
# than the request (Django's docs recommend the pool for async deployments).
DATABASES["default"]["OPTIONS"]["pool"] = {
    "min_size": env.integer("KIONGA_DB_POOL_MIN", 2),
    "max_size": env.integer("KIONGA_DB_POOL_MAX", 10),
    "timeout": KIONGA_DB_CONNECT_TIMEOUT,
    # The pool retries a lost connection in the background with a growing delay
    # (1 s, 2 s, 4 s...); past this it stops and the next request that waits
    # connects anew, so a database back after a long outage is used at once.
    "reconnect_timeout": KIONGA_DB_CONNECT_TIMEOUT,
}
# Server-side prepared statements for kionga.prepared_sql's cursors, which ask for them
# (prepare=True). Django turns psycopg's preparing off (prepare_threshold None, for
# transaction-pooling proxies, which this deployment has none of), and psycopg then
# ignores prepare=True too: every hot statement was parsed, analysed and planned anew,
# 40 % of the ingester's database CPU. Django's own cursors bind client side and never
# prepare, so only the statements that ask are prepared; the high threshold keeps a
# plain psycopg cursor from preparing on its own.
DATABASES["default"]["OPTIONS"]["prepare_threshold"] = 2**31 - 1
# And planned once: every prepared statement is a lookup by key or by an array of keys,
# whose generic plan is the custom one, and PostgreSQL otherwise plans each execution
# anew while it compares the two (a tenth of the ingester's database CPU). Statements
# not prepared (Django's) are planned per execution as before.
DATABASES["default"]["OPTIONS"]["options"] = " ".join(filter(None, (
    DATABASES["default"]["OPTIONS"].get("options"), "-c plan_cache_mode=force_generic_plan")))
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env.text("REDIS_URL") or "redis://127.0.0.1:6379/0"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
# The demo has no web server in front of uvicorn; this lets Django serve the
# admin's assets itself. Leave it off behind a real proxy.
KIONGA_SERVE_STATIC = env.boolean("KIONGA_SERVE_STATIC", False)

# API throttles (kionga.throttles): requests per user (or per address without a
# login), "N/second|minute|hour|day"; counted in Redis through Django's cache.
# Project notices (kionga.notices): django-eventstream publishes them through Redis
# pub/sub, so the listeners of every gateway process get those any process sends.
EVENTSTREAM_REDIS = {**connection_kwargs(REDIS_URL), "socket_connect_timeout": 2}
EVENTSTREAM_CHANNELMANAGER_CLASS = "kionga.notices.ProjectChannels"

KIONGA_THROTTLE_USER = env.text("KIONGA_THROTTLE_USER", "1200/minute")
KIONGA_THROTTLE_ANON = env.text("KIONGA_THROTTLE_ANON", "120/minute")
CACHES = {
    "default": {
        "BACKEND": "kionga.cache.SharedPoolRedisCache",  # one pool per process
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": "kionga:cache",
    }
}

# Bodies past this are 413 payload_too_large (kionga.http_limits before Django, and
# kionga.parsers); the internal listener allows more (kionga.settings_internal).
KIONGA_MAX_BODY_BYTES = CEILINGS["max_body_bytes"]
DATA_UPLOAD_MAX_MEMORY_SIZE = KIONGA_MAX_BODY_BYTES
# Slow clients (kionga.http_limits, kionga.http_protocol): a request's body must arrive
# whole within this many seconds (408 request_timeout), read by the event loop before a
# worker thread takes the request; its head within KIONGA_HEAD_TIMEOUT_SECONDS.
KIONGA_BODY_TIMEOUT_SECONDS = env.integer("KIONGA_BODY_TIMEOUT_SECONDS", 30, within=(1, 600))
KIONGA_HEAD_TIMEOUT_SECONDS = env.integer("KIONGA_HEAD_TIMEOUT_SECONDS", 10, within=(1, 300))

REST_FRAMEWORK = {
    # Bearer first: DRF takes the WWW-Authenticate challenge of the first class, and
    # with one it answers 401, not 403 (kionga.auth.PublicApiAuthentication).
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "kionga.auth.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["kionga.parsers.StorableJSONParser"],
    "EXCEPTION_HANDLER": "kionga.errors.api_exception_handler",
    "DEFAULT_THROTTLE_CLASSES": ["kionga.throttles.UserThrottle", "kionga.throttles.AnonThrottle"],
    # Tags and summaries by operation_id (kionga/api_tags.py).
    "DEFAULT_SCHEMA_CLASS": "kionga.schema.CatalogueAutoSchema",
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Kionga Agent Designer API",
    "DESCRIPTION": "Design, validate, run, evaluate and publish agent graphs.",
    "VERSION": "1.0.0",
    # 3.1 schemas are plain JSON Schema (nullable = type [..., "null"]), so tests can
    # validate every API answer against the document with jsonschema.
    "OAS_VERSION": "3.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # The schema and docs are public so tools can discover the API.
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SERVE_AUTHENTICATION": [],
    "TAGS": API_TAGS,
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums",
                             "kionga.schema.keep_used_tags"],
    "REDOC_DIST": "SIDECAR",
    # Swagger UI ("try it", /api/docs/swagger/) from the sidecar too; its start script
    # is ours (kionga/static/kionga/swagger-ui-init.js), so the CSP stays "self" only.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_SETTINGS": {
        "deepLinking": True,
        "displayOperationId": True,
        "filter": True,
        # The token stays in the tab's memory, never in localStorage.
        "persistAuthorization": False,
        # No badge from validator.swagger.io: the CSP allows our own origin only.
        "validatorUrl": None,
    },
    # Several bodies have a "role": a project role here, a chat role elsewhere.
    "ENUM_NAME_OVERRIDES": {"ProjectRoleEnum": ["viewer", "editor", "admin"]},
}

# Celery: Redis is both broker and result backend; JSON only (no pickle).
CELERY_BROKER_URL = REDIS_URL
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_TIMEZONE = "UTC"
# Gateway jobs have their own queue; runs go to the runner's queue (runner.protocol.QUEUE).
CELERY_TASK_DEFAULT_QUEUE = "gateway"
# Nobody reads task results: runs report through their event streams.
CELERY_TASK_IGNORE_RESULT = True
CELERY_BEAT_SCHEDULE = {
    "prune-runs": {"task": "runs.prune_runs", "schedule": 3600.0},
    # Metrics rollup slots older than the longest window (operations/rollups.py).
    "prune-rollups": {"task": "operations.prune_rollups", "schedule": 3600.0},
    # A request past its deadline is expired on time, not when someone next reads it;
    # expires=: a backlog of sweeps (beat ran while the worker was down) is dropped.
    "expire-approvals": {"task": "approvals.expire_overdue", "schedule": 1.0,
                         "options": {"expires": 5.0}},
    # A deployed agent's turn never reported ends (turn_lost) seconds after its deadline,
    # which is a minute or more after it opened (runs/lost_turns.py).
    "end-lost-turns": {"task": "runs.end_lost_turns", "schedule": 5.0,
                       "options": {"expires": 10.0}},
    # An evaluation whose settle/advance task was lost moves on within seconds.
    "sweep-evaluations": {"task": "evaluations.sweep", "schedule": 5.0,
                          "options": {"expires": 10.0}},
}
# Beat reads its schedules from the database (django-celery-beat): the entries above,
# installed there at start-up, and agents' schedules (triggers/schedules.py), which
# editors change while beat runs. `--schedule <file>` (Procfile) is then unused.
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
# Sweeps every few seconds: Celery's INFO lines about them (beat's "Sending due task",
# the worker's "received" and "succeeded") are dropped (LOGGING below); a sweep logs
# what it changed itself.
KIONGA_QUIET_TASKS = ("approvals.expire_overdue", "evaluations.sweep")

# Product configuration (agent-graph-reference.md "Configuration").
KIONGA_AGENT_DESIGNER_RUNNER_URL = env.text("KIONGA_AGENT_DESIGNER_RUNNER_URL", "")
KIONGA_AGENT_DESIGNER_RUNNER_TOKEN = env.text("KIONGA_AGENT_DESIGNER_RUNNER_TOKEN", "")
KIONGA_AGENT_DESIGNER_CALLBACK_URL = env.text(
    "KIONGA_AGENT_DESIGNER_CALLBACK_URL", "http://gateway:8087/api/v1"
)
KIONGA_NATIVE_AGENT_IMAGE = env.text("KIONGA_NATIVE_AGENT_IMAGE", "")
# The managed runtime of deployed agents (deployments/cluster.py): a kubeconfig file, else
# the in-cluster service account when the gateway runs in a pod; the agents' namespace;
# the gateway's namespace (their NetworkPolicy lets them reach only its internal listener)
# and the internal listener's URL as the agents' pods see it.
KIONGA_KUBECONFIG = env.text("KIONGA_KUBECONFIG", "")
# The local runtime (deployments/local.py; bin/demo): without a Kubernetes cluster, deploys
# write each agent's artifact and credential here for `python -m agents.local` to run.
KIONGA_LOCAL_AGENTS_DIR = env.text("KIONGA_LOCAL_AGENTS_DIR", "")
# The platform chat model's price (tokens of `model: llm` nodes in deployed agents' turns).
KIONGA_LLM_PRICE_PER_1K = env.text("KIONGA_LLM_PRICE_PER_1K", "0")
KIONGA_AGENT_NAMESPACE = env.text("KIONGA_AGENT_NAMESPACE", "kionga-agents")
KIONGA_GATEWAY_NAMESPACE = env.text("KIONGA_GATEWAY_NAMESPACE", "kionga")
KIONGA_AGENT_GATEWAY_URL = env.text(
    "KIONGA_AGENT_GATEWAY_URL", "http://gateway-internal.kionga.svc.cluster.local:8087/api/v1")
# Deployed agents' traces: the collector their NetworkPolicy lets them reach (kionga/
# otlp_egress.py; None: no egress but the gateway's); their OTEL_* variables come from the
# optional ConfigMap and Secret kionga-agent-otel of the agents' namespace.
KIONGA_AGENT_OTLP_EGRESS = env.parsed("KIONGA_AGENT_OTLP_EGRESS", None, otlp_egress.otlp_egress,
                                      otlp_egress.EXAMPLE)
# Deploy ceilings (deployments/ceilings.py). One pod's limits (the agents' namespace's
# LimitRange holds the same maxima), and per project: agents, the sum of their
# max_replicas, and of max_replicas x limits.
KIONGA_AGENT_MAX_CPU = env.parsed("KIONGA_AGENT_MAX_CPU", "2", quantities.cpu_setting,
                                  quantities.EXAMPLE)
KIONGA_AGENT_MAX_MEMORY = env.parsed("KIONGA_AGENT_MAX_MEMORY", "2Gi",
                                     quantities.memory_setting, quantities.EXAMPLE)
KIONGA_PROJECT_MAX_AGENTS = env.integer("KIONGA_PROJECT_MAX_AGENTS", 10, within=(1, 10_000))
KIONGA_PROJECT_MAX_AGENT_REPLICAS = env.integer("KIONGA_PROJECT_MAX_AGENT_REPLICAS", 30,
                                                within=(1, 100_000))
KIONGA_PROJECT_MAX_AGENT_CPU = env.parsed("KIONGA_PROJECT_MAX_AGENT_CPU", "16",
                                          quantities.cpu_setting, quantities.EXAMPLE)
KIONGA_PROJECT_MAX_AGENT_MEMORY = env.parsed("KIONGA_PROJECT_MAX_AGENT_MEMORY", "16Gi",
                                             quantities.memory_setting, quantities.EXAMPLE)
KIONGA_DESIGNER_RUNNER_TOKEN = env.text("KIONGA_DESIGNER_RUNNER_TOKEN", "")
KIONGA_DESIGNER_PORT = env.integer("KIONGA_DESIGNER_PORT", 9100)
KIONGA_DESIGNER_MAX_RUNS = env.integer("KIONGA_DESIGNER_MAX_RUNS", DEFAULT_MAX_RUNS)
# Fair share (runs.quota, runs.stream_limits): runs in flight per project (0 = half the
# runner's capacity), event streams per user and in all, per gateway process.
KIONGA_PROJECT_MAX_RUNS = env.integer("KIONGA_PROJECT_MAX_RUNS", 0)
# Runs waiting on a person hold no slot (runs.quota.park_run); at most this many are
# parked across the runner (0 = KIONGA_DESIGNER_MAX_RUNS) and per project (0 = half).
KIONGA_MAX_PARKED_RUNS = env.integer("KIONGA_MAX_PARKED_RUNS", 0, within=(0, 1_000_000))
KIONGA_PROJECT_MAX_PARKED_RUNS = env.integer("KIONGA_PROJECT_MAX_PARKED_RUNS", 0,
                                             within=(0, 1_000_000))
KIONGA_MAX_STREAMS_PER_USER = env.integer("KIONGA_MAX_STREAMS_PER_USER", 10)
KIONGA_MAX_STREAMS = env.integer("KIONGA_MAX_STREAMS", 500)
# How often a long event stream checks again that its caller may still read the run
# (runs.stream_access): a revoked token or a removed member loses the stream within it.
KIONGA_STREAM_RECHECK_SECONDS = env.integer("KIONGA_STREAM_RECHECK_SECONDS", 20,
                                            within=(1, 3600))
MLAIOPS_LLM_BACKEND = env.text("MLAIOPS_LLM_BACKEND", "mock")
MLAIOPS_LLM_MODEL = env.text("MLAIOPS_LLM_MODEL", "")
MLAIOPS_LLM_BASE_URL = env.text("MLAIOPS_LLM_BASE_URL", "")
# Empty judge settings mean "use the platform chat model" (reference).
KIONGA_JUDGE_BACKEND = env.text("KIONGA_JUDGE_BACKEND", "")
KIONGA_JUDGE_MODEL = env.text("KIONGA_JUDGE_MODEL", "")
# A judge run that has not answered by then fails its case (evaluations.judge).
KIONGA_JUDGE_TIMEOUT_SECONDS = env.integer("KIONGA_JUDGE_TIMEOUT_SECONDS", 60, within=(1, 300))
KIONGA_RUN_RETENTION_DAYS = env.integer("KIONGA_RUN_RETENTION_DAYS", 30)
# Regexes (RE2 syntax) whose matches are redacted from stored events and logs.
KIONGA_SECRET_PATTERNS = env.strings("KIONGA_SECRET_PATTERNS", DEFAULT_SECRET_PATTERNS)
# Keys resource secrets are encrypted under (kionga.secret_box): urlsafe base64 of 32
# random bytes each; the first encrypts, any decrypts. Required: the listeners refuse to
# start without a valid one.
KIONGA_SECRET_KEYS = env.strings("KIONGA_SECRET_KEYS")

# Hosts, addresses/CIDRs and host:port the gateway may call although they are not
# public (kionga.egress): e.g. an in-cluster model server. Empty: public addresses only.
KIONGA_EGRESS_ALLOW = env.strings("KIONGA_EGRESS_ALLOW")
# Upstream calls (models, functions, API connections) one internal listener process
# has in flight at once, per project and per resource (kionga.upstream.call_slot); more
# wait for a slot within the call's own time limit. Bounds what one tenant's slow
# upstream can hold (sockets, memory), not what it can do at normal speed.
KIONGA_UPSTREAM_CALLS_PER_PROJECT = env.integer("KIONGA_UPSTREAM_CALLS_PER_PROJECT", 1000,
                                                within=(1, 100_000))
KIONGA_UPSTREAM_CALLS_PER_RESOURCE = env.integer("KIONGA_UPSTREAM_CALLS_PER_RESOURCE", 500,
                                                 within=(1, 100_000))
# How long the internal listener waits for a model's answer (each read of a streamed
# one) and for a function, API connection or MCP tool (runs.internal.actions). With the
# wait for a call slot (its SLOT_WAIT) both stay below the default of the runner client's
# KIONGA_RUNNER_HTTP_TIMEOUT, so the runner gets the listener's clean 503 instead of a
# timeout of its own: hence the defaults are also the most. Tests lower them to see an
# upstream cut off without waiting the whole time.
MODEL_TIMEOUT_MAX_SECONDS = 25
CALL_TIMEOUT_MAX_SECONDS = 20
KIONGA_MODEL_TIMEOUT_SECONDS = env.integer("KIONGA_MODEL_TIMEOUT_SECONDS",
                                           MODEL_TIMEOUT_MAX_SECONDS,
                                           within=(1, MODEL_TIMEOUT_MAX_SECONDS))
KIONGA_CALL_TIMEOUT_SECONDS = env.integer("KIONGA_CALL_TIMEOUT_SECONDS",
                                          CALL_TIMEOUT_MAX_SECONDS,
                                          within=(1, CALL_TIMEOUT_MAX_SECONDS))

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # The level first: an operator finds ERROR lines (Redis or the database refusing
    # the ingester, a crash) without knowing the messages.
    "formatters": {"level": {"format": "%(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "level",
                             "filters": ["no_mcp_peer_text"]}},
    "root": {"handlers": ["console"], "level": env.text("KIONGA_LOG_LEVEL", "INFO")},
    "filters": {"quiet_tasks": {"()": "kionga.log_filters.QuietTasks",
                                "tasks": KIONGA_QUIET_TASKS},
                "no_mcp_peer_text": {"()": "kionga.log_filters.NoMcpPeerText"}},
    # Every 401/404 would otherwise be a warning line; crashes are still logged.
    "loggers": {"django.request": {"level": "ERROR"},
                # One INFO line per admin login otherwise; failures and lockouts stay.
                "axes": {"level": "WARNING"},
                **{name: {"filters": ["quiet_tasks"]} for name in CELERY_TASK_LOGGERS}},
}
