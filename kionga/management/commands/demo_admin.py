"""``manage.py demo_admin``: make sure the quick start has an admin-site login.

Idempotent: the superuser ``admin`` gets a random password once; it is kept in
var/demo-admin-password (gitignored, mode 600) and reused on the next start,
so restarting the demo does not change the login. Prints the password. With
``--project SLUG`` the admin is also an admin member of that project, so the same login
opens the designer canvas and the approver UI on the demo's designs.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandParser

from kionga.models import Membership, Project, Role

USERNAME = "admin"


class Command(BaseCommand):
    help = "Create the demo superuser 'admin' (or reuse it) and print its password."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--password-file", type=Path, default=Path(settings.VAR_DIR) / "demo-admin-password"
        )
        parser.add_argument("--project", help="slug of a project the admin should administer")

    def handle(self, *args: Any, **options: Any) -> None:
        password = ensure_admin(options["password_file"])
        if options["project"]:
            project = Project.objects.get(slug=options["project"])
            Membership.objects.update_or_create(project=project,
                                                user=User.objects.get(username=USERNAME),
                                                defaults={"role": Role.ADMIN})
        self.stdout.write(password)


def ensure_admin(password_file: Path) -> str:
    user, _ = User.objects.get_or_create(username=USERNAME)
    password = read_password(password_file)
    if password and user.check_password(password) and user.is_superuser:
        return password
    password = secrets.token_urlsafe(12)
    user.set_password(password)
    user.is_staff = user.is_superuser = user.is_active = True
    user.save()
    write_password(password_file, password)
    return password


def read_password(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return ""


def write_password(path: Path, password: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch(mode=0o600, exist_ok=True)
    path.write_text(password + "\n", encoding="utf-8")
