"""The designer canvas's pages: signed-in only, the built bundle referenced through Vite's
manifest (no inline script), a clear message when the canvas was not built, the admin's
link, and the component tests' registry copy kept equal to the registry."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from contracts.registry import registry_document
from designer import manifest
from tests.designs_helpers import make_design

ROOT = Path(__file__).resolve().parent.parent


def test_it_sends_people_who_are_not_signed_in_to_the_designer_login(client: Client) -> None:
    response = client.get("/designer/designs/00000000-0000-0000-0000-000000000001/")
    assert response.status_code == 302
    assert response["Location"].startswith("/designer/login/?next=/designer/designs/")


def test_it_signs_in_people_who_are_not_staff(client: Client, alice: Any) -> None:
    assert not alice.is_staff
    page = client.get("/designer/login/")
    assert page.status_code == 200 and b'name="csrfmiddlewaretoken"' in page.content
    response = client.post("/designer/login/?next=/designer/",
                           {"username": "alice", "password": "alice-password",
                            "next": "/designer/"})
    assert response.status_code == 302 and response["Location"] == "/designer/"


def _write_manifest(path: Path, entry: dict[str, Any]) -> Path:
    path.write_text(json.dumps({manifest.ENTRY: entry}), encoding="utf-8")
    return path


def test_it_references_the_built_assets_and_passes_config_as_data(
        client: Client, alice: Any, acme: Any, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    built = _write_manifest(tmp_path / "manifest.json",
                            {"file": "assets/main-abc123.js", "css": ["assets/main-def456.css"]})
    monkeypatch.setattr(manifest, "MANIFEST", built)
    design = make_design(alice, acme)
    client.force_login(alice)
    response = client.get(f"/designer/designs/{design.pk}/")
    html = response.content.decode()
    assert response.status_code == 200
    assert '<script type="module" src="/static/designer/canvas/assets/main-abc123.js">' in html
    assert 'href="/static/designer/canvas/assets/main-def456.css"' in html
    assert '<script id="designer-config" type="application/json">' in html
    config = json.loads(html.split('type="application/json">')[1].split("</script>")[0])
    assert config["design_id"] == str(design.pk) and config["api"] == "/api/v1"
    # Every other script is a file: the CSP allows nothing inline.
    assert html.count("<script") == 2
    assert "script-src 'self'" in response["Content-Security-Policy"]
    assert "csrftoken" in response.cookies


def test_it_says_how_to_build_the_canvas_when_it_was_not_built(
        client: Client, alice: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(manifest, "MANIFEST", tmp_path / "missing.json")
    client.force_login(alice)
    response = client.get("/designer/")
    assert response.status_code == 200
    assert b"Canvas not built:</strong> install node" in response.content
    assert b'type="module"' not in response.content


@pytest.mark.parametrize("content", ["", "{", "[]", '{"src/main.tsx": {}}', '{"other": {}}'])
def test_it_treats_a_broken_manifest_as_not_built(tmp_path: Path, content: str) -> None:
    path = tmp_path / "manifest.json"
    path.write_text(content, encoding="utf-8")
    assert manifest.canvas_assets(path) is None


def test_the_admin_links_a_design_to_its_canvas(staff: Client, alice: Any, acme: Any) -> None:
    design = make_design(alice, acme)
    page = staff.get(f"/admin/designs/design/{design.pk}/change/")
    assert f'href="/designer/designs/{design.pk}/">Open in designer</a>'.encode() in page.content


def test_the_component_tests_read_the_registry_as_served() -> None:
    # designer/frontend/src/test/registry.json is what vitest checks ports and forms
    # against; regenerate it from registry_document() when the registry changes.
    copy = ROOT / "designer" / "frontend" / "src" / "test" / "registry.json"
    served = json.loads(json.dumps(registry_document()))
    assert json.loads(copy.read_text(encoding="utf-8")) == served
