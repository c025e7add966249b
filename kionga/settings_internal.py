"""Settings for the internal listener (:8087): same as the public ones, other URLconf.

A separate process with its own URLconf means a route that is not listed in
kionga.internal_urls simply does not exist there, so run credentials can never
reach the public API, the admin or an approval decision.
"""

from kionga.settings import *  # noqa: F401,F403

ROOT_URLCONF = "kionga.internal_urls"
