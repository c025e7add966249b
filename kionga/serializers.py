"""Serializers used only to document platform responses in the OpenAPI schema."""

from __future__ import annotations

from rest_framework import serializers


class ErrorDetailSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="Stable snake_case error code.")
    message = serializers.CharField()
    details = serializers.DictField()


class ErrorSerializer(serializers.Serializer):
    error = ErrorDetailSerializer()


class ProjectRoleSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    slug = serializers.CharField()
    name = serializers.CharField()
    role = serializers.ChoiceField(choices=["viewer", "editor", "admin"])


class ApiDocsSerializer(serializers.Serializer):
    openapi = serializers.CharField(help_text="The OpenAPI document (JSON or YAML).")
    reference = serializers.CharField(help_text="The reference pages (ReDoc).")


class ApiRootSerializer(serializers.Serializer):
    name = serializers.CharField()
    version = serializers.CharField()
    entry_points = serializers.DictField(
        child=serializers.CharField(),
        help_text="Each route without a path parameter: its path under /api/v1/ and its URL.")
    docs = ApiDocsSerializer()


class MeSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField()
    projects = ProjectRoleSerializer(many=True)
