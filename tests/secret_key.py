"""The fixed KIONGA_SECRET_KEYS of tests and benchmarks (kionga.secret_box): resource
secrets they create are encrypted under it. Never a production key."""

TEST_SECRET_KEY = "dGVzdC1vbmx5LWtpb25nYS1zZWNyZXQta2V5LTMyYiE="
