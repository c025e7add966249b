"""`manage.py load_demo --project SLUG`: one design per starter template, idempotent."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser

from designs.actions import do_create_design
from designs.models import Design
from designs.starter_templates import TEMPLATES
from kionga.models import Membership, Project


class Command(BaseCommand):
    help = "Load the starter templates as designs of a project (skips names that exist)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--project", default="demo")

    def handle(self, *args: Any, **options: Any) -> None:
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            raise CommandError(f"no project {options['project']!r}; run bootstrap first")
        owner = _owner(project)
        created = 0
        for template in TEMPLATES:
            if not Design.objects.filter(project=project, name=template["name"]).exists():
                do_create_design(owner, project, template["name"], template["description"],
                                 template["graph"])
                created += 1
        self.stdout.write(f"{created} demo designs created in {project.slug}")


def _owner(project: Project) -> User:
    membership = Membership.objects.filter(project=project).order_by("id").first()
    if membership is None:
        raise CommandError(f"project {project.slug!r} has no members")
    return membership.user
