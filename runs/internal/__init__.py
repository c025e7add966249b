"""The internal listener's own routes: the platform resources a run credential may call.

urls.py lists them, views.py parses and answers, actions.py finds the run project's
resource and calls it (kionga.upstream for the outside world), openapi.py documents
the answers of runner/resources.py's contract.
"""
