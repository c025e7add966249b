"""`manage.py demo_admin --project demo`: the quick start's one login reaches the admin,
the designer and the approver UI of the demo project, and keeps its password."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from kionga.models import Membership, Project

pytestmark = pytest.mark.django_db


def test_the_demo_admin_administers_the_demo_project(tmp_path: Path) -> None:
    Project.objects.create(slug="demo", name="demo")
    password_file = tmp_path / "password"
    first, second = StringIO(), StringIO()
    call_command("demo_admin", "--project", "demo", "--password-file", password_file,
                 stdout=first)
    call_command("demo_admin", "--project", "demo", "--password-file", password_file,
                 stdout=second)
    password = first.getvalue().strip()
    assert password and second.getvalue().strip() == password  # stable across restarts
    admin = User.objects.get(username="admin")
    assert admin.is_superuser and admin.check_password(password)
    assert list(Membership.objects.filter(user=admin).values_list("project__slug", "role")) \
        == [("demo", "admin")]
    assert password_file.stat().st_mode & 0o777 == 0o600
