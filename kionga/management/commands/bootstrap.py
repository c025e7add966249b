"""``manage.py bootstrap --project SLUG --user NAME --role ROLE [--json]``.

Idempotent for the project, user and membership (a repeat updates the role);
each call issues a NEW token, since existing tokens cannot be shown again. A user
without a usable password (new, or made so before) gets a generated one, printed this
once, so the person can sign in on the web pages too; a user who has a password keeps
it (``password`` is null in the JSON).
"""

from __future__ import annotations

import json
import secrets
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from django.utils.text import slugify

from kionga.models import Membership, Project, Role
from kionga.tokens import issue_token


class Command(BaseCommand):
    help = "Create (or update) a project, a user, their membership, and print a new API token."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument("--user", required=True, help="username")
        parser.add_argument("--role", required=True, help="viewer, editor or admin")
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args: Any, **options: Any) -> None:
        slug, username, role = options["project"], options["user"], options["role"]
        check_arguments(slug, username, role)
        result = bootstrap(slug, username, role)
        if options["json"]:
            self.stdout.write(json.dumps(result))
        else:
            self.stdout.write(
                f"{username} is {role} of project {slug} (id {result['project_id']}); "
                f"token: {result['token']}"
            )
            if result["password"]:
                self.stdout.write(f"sign in at {result['sign_in_url']} as {username} with "
                                  f"password: {result['password']} (shown once)")
            else:
                self.stdout.write(f"sign in at {result['sign_in_url']} as {username} with "
                                  "their existing password")


def check_arguments(slug: str, username: str, role: str) -> None:
    if role not in Role.values:
        raise CommandError(f"--role must be one of {', '.join(Role.values)}, got {role!r}")
    if slugify(slug) != slug:
        raise CommandError(f"--project must be a slug (lowercase letters, digits, -), got {slug!r}")
    if not username.strip():
        raise CommandError("--user must not be empty")


@transaction.atomic
def bootstrap(slug: str, username: str, role: str) -> dict[str, Any]:
    project, _ = Project.objects.get_or_create(slug=slug, defaults={"name": slug})
    user, _ = User.objects.get_or_create(username=username)
    password = None
    if not user.password or not user.has_usable_password():  # "": just made
        # A usable sign-in for the web pages, shown once (only its hash is stored).
        password = secrets.token_urlsafe(12)
        user.set_password(password)
        user.save(update_fields=["password"])
    Membership.objects.update_or_create(project=project, user=user, defaults={"role": role})
    token = issue_token(user, name=f"bootstrap:{slug}")
    return {"project_id": project.pk, "user": user.get_username(), "token": token,
            "password": password, "sign_in_url": settings.KIONGA_PUBLIC_URL + "/"}
