"""Signals other apps listen to, so runs never imports the apps built on top of it."""

from __future__ import annotations

from django.dispatch import Signal

# Sent inside the transaction that stores the runs' final status, with `runs`: the
# list of Run rows that just ended (any status). Receivers close what a run owned
# (approvals cancel their pending requests) in the same transaction.
runs_ended = Signal()
