"""``manage.py bootstrap --project SLUG --user NAME --role ROLE [--json]``.

Idempotent for the project, user and membership (a repeat updates the role);
each call issues a NEW token, since existing tokens cannot be shown again.
"""

from __future__ import annotations

import json
from typing import Any

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
    user, created = User.objects.get_or_create(username=username)
    if created:
        # API-only until someone sets a password (e.g. createsuperuser/changepassword).
        user.set_unusable_password()
        user.save(update_fields=["password"])
    Membership.objects.update_or_create(project=project, user=user, defaults={"role": role})
    token = issue_token(user, name=f"bootstrap:{slug}")
    return {"project_id": project.pk, "user": user.get_username(), "token": token}
