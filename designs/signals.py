"""Signals the designs app sends to the apps above it.

`version_deployments`: sent with `design=` when the design's versions are listed; a
receiver returns {version_id (str): [deployment, ...]} (deployments/receivers.py), so the
versions list shows where each version is deployed without designs importing the app.
"""

from django.dispatch import Signal

version_deployments = Signal()
