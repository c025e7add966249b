from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from designs.models import Design
from designs.starter_templates import TEMPLATES


def test_it_loads_each_template_once(alice: Any, acme: Any) -> None:
    call_command("load_demo", "--project", "acme", stdout=StringIO())
    call_command("load_demo", "--project", "acme", stdout=StringIO())
    names = sorted(Design.objects.filter(project=acme).values_list("name", flat=True))
    assert names == sorted(t["name"] for t in TEMPLATES)


def test_it_needs_an_existing_project(db: None) -> None:
    with pytest.raises(CommandError):
        call_command("load_demo", "--project", "nope", stdout=StringIO())
