"""The runs app's hot routes (kionga.hot_routes), served as plain ASGI ahead of Django.

- `POST /api/v1/agent-designs/{id}/runs` with a bearer token (JSON answer, or the run's
  stream with `Accept: text/event-stream`): start.py reads token, design, role and the
  revision in one prepared query, then starts the run with runs.start's own code.
- `GET …/runs/{id}/events` with a bearer token and `Accept: text/event-stream`:
  runs.stream_open's one query (the API's throttles counted in the same thread hop),
  then runs.sse's stream, whose access that query checks again now and then
  (runs.stream_access). A HEAD is Django's (it answers the headers, takes no place).

Anything else — a session cookie, an Idempotency-Key, a session or history in the body,
a body the usual rules would refuse — goes to Django untouched (asgi.py decides before
doing anything), so every error and every rare case keeps its one implementation.
"""
