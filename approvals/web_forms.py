"""The approver UI's decision form: the same fields and limits as the API's body."""

from __future__ import annotations

from django import forms

from approvals.actions import DECISIONS
from approvals.serializers import MAX_TEXT


class DecisionForm(forms.Form):
    # Two submit buttons share the name: the one pressed says which decision.
    decision = forms.ChoiceField(choices=[(d, d) for d in DECISIONS])
    comment = forms.CharField(max_length=MAX_TEXT, required=False, strip=True)
