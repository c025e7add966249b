"""Settings for the internal listener (:8087): same as the public ones, other URLconf.

A separate process with its own URLconf means a route that is not listed in
kionga.internal_urls simply does not exist there, so run credentials can never
reach the public API, the admin or an approval decision.
"""

from kionga.settings import *  # noqa: F401,F403

ROOT_URLCONF = "kionga.internal_urls"

# A predict call carries a whole conversation: up to 1,000 messages, each a node output
# of up to 64 KB (contracts LIMITS["output_bytes"]) — more than the public 1 MB.
KIONGA_MAX_BODY_BYTES = 8 * 1024 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = KIONGA_MAX_BODY_BYTES

# What this listener needs of the public chain: JSON errors, the host check, security
# headers. No sessions, CSRF, sign-in or messages (only run and agent credentials are
# accepted here), and every hook async-capable, so the views served on the event loop
# (kionga.internal_asgi) run without a thread: the same classes, their hooks called on
# the loop (kionga.loop_middleware) instead of one thread hop each.
MIDDLEWARE = [
    "kionga.loop_middleware.ApiJsonErrorMiddleware",
    "kionga.loop_middleware.SecurityMiddleware",
    "kionga.loop_middleware.PolicyOnceMiddleware",
    "kionga.loop_middleware.CommonMiddleware",
    "kionga.loop_middleware.XFrameOptionsMiddleware",
]

# Not throttled: every call here is a run's resource call, bounded by runner capacity;
# a 429 is not part of the runner's contract (runner/resources.py).
REST_FRAMEWORK = {**REST_FRAMEWORK, "DEFAULT_THROTTLE_CLASSES": []}  # noqa: F405

# The runner calls this listener over plain HTTP inside the deployment.
SECURE_SSL_REDIRECT = False
