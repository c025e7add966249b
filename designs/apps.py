from django.apps import AppConfig


class DesignsConfig(AppConfig):
    name = "designs"

    def ready(self) -> None:
        # Published versions hold on to the resources they use (kionga.projects.usage).
        from designs.resource_usage import versions_using
        from kionga.projects.usage import register

        register(versions_using)
