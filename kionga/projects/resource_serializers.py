"""Request bodies of the resource routes, one serializer per kind (PATCH: partial).

Secrets are write-only: `secret` / `secret_headers` set or replace them (an empty
string or {} clears), and no answer carries them. URLs pass the egress policy.
"""

from __future__ import annotations

import re
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import URLValidator
from rest_framework import serializers

from kionga.egress import configured_url_refusal
from kionga.request_body import StrictCharField, StrictFloatField

RESOURCE_ID = re.compile(r"^[-a-zA-Z0-9_]+$")
HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$")
METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"]
MAX_PRICE = 999_999.0
MAX_HEADERS = 20
MAX_PATHS = 50


def check_url(value: str) -> str:
    try:
        URLValidator(schemes=["http", "https"])(value)
    except DjangoValidationError:
        raise serializers.ValidationError("Enter a valid http or https URL.") from None
    refusal = configured_url_refusal(value)
    if refusal:
        raise serializers.ValidationError(refusal)
    return value


def url_field() -> StrictCharField:
    return StrictCharField(max_length=500, validators=[check_url])


def secret_field() -> StrictCharField:
    return StrictCharField(max_length=500, required=False, allow_blank=True, write_only=True,
                           help_text="Write-only: set or replace ('' clears); never returned.")


def price_field() -> StrictFloatField:
    return StrictFloatField(min_value=0, max_value=MAX_PRICE, required=False,
                            help_text="Price per 1,000 tokens (6 decimal places kept).")


class ResourceSerializer(serializers.Serializer):
    id = StrictCharField(max_length=100, help_text="The ID graphs use; unique per kind in "
                         "the project, fixed once created.")
    name = StrictCharField(max_length=200, required=False, allow_blank=True)
    description = StrictCharField(max_length=5000, required=False, allow_blank=True)

    def validate_id(self, value: str) -> str:
        if not RESOURCE_ID.match(value):
            raise serializers.ValidationError("Letters, digits, '-' and '_' only.")
        return value


class ModelBody(ResourceSerializer):
    base_url = url_field()
    model_name = StrictCharField(max_length=200)
    secret = secret_field()
    price_prompt_per_1k = price_field()
    price_completion_per_1k = price_field()


class FunctionBody(ResourceSerializer):
    url = url_field()
    secret = secret_field()


def check_secret_headers(value: dict[str, Any]) -> dict[str, str]:
    if len(value) > MAX_HEADERS:
        raise serializers.ValidationError(f"At most {MAX_HEADERS} headers.")
    for name, header in value.items():
        if not HEADER_NAME.match(name) or any(ch in header for ch in "\r\n\x00"):
            raise serializers.ValidationError(
                "Header names are HTTP tokens; values have no line breaks.")
    return dict(value)


def secret_headers_field() -> serializers.DictField:
    return serializers.DictField(
        child=StrictCharField(max_length=2000, allow_blank=True), required=False,
        write_only=True, help_text="Write-only: replaces every header; never returned.")


class ConnectionBody(ResourceSerializer):
    base_url = url_field()
    allowed_methods = serializers.ListField(
        child=serializers.ChoiceField(choices=METHODS), required=False, max_length=len(METHODS),
        help_text="Empty: GET and POST.")
    allowed_paths = serializers.ListField(
        child=StrictCharField(max_length=300), required=False, max_length=MAX_PATHS,
        help_text="Path prefixes below base_url a run may call; empty: any.")
    secret_headers = secret_headers_field()

    def validate_allowed_methods(self, value: list[str]) -> list[str]:
        return sorted(set(value), key=METHODS.index)

    def validate_allowed_paths(self, value: list[str]) -> list[str]:
        for path in value:
            if not path.startswith("/") or ".." in path or "\\" in path or "//" in path \
                    or any(ord(ch) < 33 or ord(ch) == 127 for ch in path):
                raise serializers.ValidationError(
                    "Each path starts with '/' and has no '..', '//', '\\', space or "
                    "control character.")
        return sorted(set(value))

    def validate_secret_headers(self, value: dict[str, Any]) -> dict[str, str]:
        return check_secret_headers(value)


class McpServerBody(ResourceSerializer):
    url = url_field()
    secret_headers = secret_headers_field()

    def validate_secret_headers(self, value: dict[str, Any]) -> dict[str, str]:
        return check_secret_headers(value)


class KnowledgeBaseBody(ResourceSerializer):
    pass


class DatasetBody(ResourceSerializer):
    pass


class DocumentBody(serializers.Serializer):
    title = StrictCharField(max_length=300, required=False, allow_blank=True)
    text = StrictCharField(max_length=200_000)


class ObjectBody(serializers.Serializer):
    key = StrictCharField(max_length=300)
    value = serializers.JSONField()
