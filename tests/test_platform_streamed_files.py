"""A streamed answer of the ordinary handler (a static file, Django's FileResponse,
read a chunk per thread hop by kionga.wsgi_hop) reaches the client whole, byte for
byte, over real HTTP; its HEAD has the same length and no body."""

from __future__ import annotations

from pathlib import Path

import django.contrib.admin
import httpx
import pytest

from tests.public_gateway import public_gateway

pytestmark = pytest.mark.django_db(transaction=True)
# Large enough for dozens of Django's 4 KiB file blocks.
ASSET = "admin/js/vendor/jquery/jquery.js"


def test_a_static_file_arrives_whole() -> None:
    expected = (Path(django.contrib.admin.__file__).parent / "static" / ASSET).read_bytes()
    assert len(expected) > 64 * 4096
    with public_gateway(KIONGA_SERVE_STATIC="1") as base:
        got = httpx.get(f"{base}/static/{ASSET}", timeout=10)
        head = httpx.head(f"{base}/static/{ASSET}", timeout=10)
    assert got.status_code == 200
    assert got.content == expected
    assert head.status_code == 200
    assert head.headers["content-length"] == str(len(expected))
    assert head.content == b""
