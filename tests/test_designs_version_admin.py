"""The admin lists versions per design and shows the artifact, read-only."""

from typing import Any

from django.test import Client

from designs.models import Version
from tests.designs_helpers import make_design
from tests.versions_helpers import publish


def test_it_shows_versions_on_the_design_and_the_artifact_read_only(
        staff: Client, alice: Any, acme: Any) -> None:
    design = make_design(alice, acme)
    version = publish(alice, design, notes="First release")
    html = staff.get(f"/admin/designs/design/{design.pk}/change/").content.decode()
    assert version.content_sha256 in html
    page = staff.get(f"/admin/designs/version/{version.pk}/change/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "&quot;runtime_module&quot;: &quot;agents.native_graph:build_native&quot;" in text
    assert 'name="notes"' not in text  # no editable field
    response = staff.post(f"/admin/designs/version/{version.pk}/change/",
                          {"notes": "changed", "number": 7})
    assert response.status_code == 403
    assert staff.post(f"/admin/designs/version/{version.pk}/delete/",
                      {"post": "yes"}).status_code == 403
    assert staff.get("/admin/designs/version/add/").status_code == 403
    version.refresh_from_db()
    assert version.notes == "First release" and version.number == 1
    assert Version.objects.count() == 1
