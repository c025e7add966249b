"""Pinned outputs through the API (designs.pins): editors pin a node's output (typed by
its port, within 64 KiB) and clear it, viewers read pins, other tenants see nothing; each
change is audited; pins never change the design's revision, its behaviour hash or what a
publish puts in a version (docs/decisions/pinned-outputs-live-with-the-design.md)."""

from __future__ import annotations

import json
from typing import Any

from contracts.hashing import content_sha256
from contracts.pins import PIN_BYTES
from designs.models import Design, Pin
from kionga.models import AuditEvent
from tests.conftest import Api
from tests.designs_helpers import make_design
from tests.versions_helpers import publish


def pins_url(design: Design, node: str = "") -> str:
    return f"/api/v1/agent-designs/{design.pk}/pins" + (f"/{node}" if node else "")


def test_an_editor_pins_a_nodes_output_and_clears_it(api: Api, alice: Any, carol: Any,
                                                      acme: Any) -> None:
    design = make_design(alice, acme)
    client = api.client_for(carol)
    pinned = client.put(pins_url(design, "model"), {"port": "out", "value": "fixed answer"},
                        format="json")
    assert pinned.status_code == 200, pinned.content
    assert {k: pinned.json()[k] for k in ("node_id", "port", "value", "author")} == {
        "node_id": "model", "port": "out", "value": "fixed answer", "author": "carol"}
    again = client.put(pins_url(design, "model"), {"port": "error", "value": "it broke"},
                       format="json")
    assert again.status_code == 200, again.content
    listed = client.get(pins_url(design)).json()["pins"]
    assert [(p["node_id"], p["port"], p["value"]) for p in listed] == [
        ("model", "error", "it broke")]
    cleared = client.delete(pins_url(design, "model"))
    assert cleared.status_code == 204
    assert client.get(pins_url(design)).json() == {"pins": []}
    api.assert_error(client.delete(pins_url(design, "model")), 404, "not_found")
    actions = list(AuditEvent.objects.filter(action__startswith="design.pin_")
                   .order_by("id").values_list("action", "actor__username", "details"))
    assert actions == [
        ("design.pin_set", "carol", {"node_id": "model", "port": "out"}),
        ("design.pin_set", "carol", {"node_id": "model", "port": "error"}),
        ("design.pin_cleared", "carol", {"node_id": "model"})]


def test_a_value_must_fit_its_port(api: Api, alice: Any, acme: Any) -> None:
    design = make_design(alice, acme)
    client = api.client_for(alice)

    def refused(node: str, body: dict[str, Any], status: int, code: str) -> dict[str, Any]:
        return api.assert_error(client.put(pins_url(design, node), body, format="json"),
                                status, code)

    wrong = refused("model", {"port": "out", "value": {"not": "text"}}, 400, "invalid_request")
    assert wrong["details"]["fields"] == {"value": ["A text value is a string."]}
    port = refused("model", {"port": "nope", "value": "x"}, 400, "invalid_request")
    assert "port" in port["details"]["fields"]
    refused("output", {"port": "out", "value": "x"}, 400, "invalid_request")  # no outputs
    refused("ghost", {"port": "out", "value": "x"}, 404, "not_found")
    big = refused("model", {"port": "out", "value": "x" * PIN_BYTES}, 400, "invalid_request")
    assert big["details"]["fields"] == {
        "value": [f"A pinned value is at most {PIN_BYTES} bytes of JSON."]}
    refused("model", {"value": "x"}, 400, "invalid_request")  # no port
    refused("model", {"port": "out"}, 400, "invalid_request")  # no value
    assert not Pin.objects.exists()


def test_viewers_read_pins_and_other_tenants_see_nothing(api: Api, alice: Any, bob: Any,
                                                          mallory: Any, acme: Any) -> None:
    design = make_design(alice, acme)
    assert api.client_for(alice).put(pins_url(design, "model"), {"port": "out", "value": "x"},
                                     format="json").status_code == 200
    viewer = api.client_for(bob)
    assert [p["node_id"] for p in viewer.get(pins_url(design)).json()["pins"]] == ["model"]
    api.assert_error(viewer.put(pins_url(design, "prompt"), {"port": "out", "value": "y"},
                                format="json"), 403, "forbidden")
    api.assert_error(viewer.delete(pins_url(design, "model")), 403, "forbidden")
    other = api.client_for(mallory)
    api.assert_error(other.get(pins_url(design)), 404, "not_found")
    api.assert_error(other.put(pins_url(design, "model"), {"port": "out", "value": "y"},
                               format="json"), 404, "not_found")
    api.assert_error(other.delete(pins_url(design, "model")), 404, "not_found")
    assert list(Pin.objects.values_list("node_id", "value")) == [("model", "x")]


def test_pins_stay_out_of_revisions_hashes_and_versions(api: Api, alice: Any,
                                                        acme: Any) -> None:
    design = make_design(alice, acme)
    before = content_sha256(design.current().graph)
    assert api.client_for(alice).put(pins_url(design, "model"),
                                     {"port": "out", "value": "pinned-text"},
                                     format="json").status_code == 200
    design.refresh_from_db()
    assert design.revision == 1 and design.revisions.count() == 1
    read = api.client_for(alice).get(f"/api/v1/agent-designs/{design.pk}").json()
    assert "pinned-text" not in json.dumps(read)
    version = publish(alice, design)
    assert version.content_sha256 == before
    assert "pinned-text" not in json.dumps(version.artifact)
