"""Projects administer themselves through the API: members, tokens and resources.

Views stay thin (views.py, resource_views.py); the checks and actions are in
members.py, token_actions.py and resources.py. Apps above the platform say which of
their rows use a resource through usage.register (designs: published versions).
"""
