from django.apps import AppConfig


class OperationsConfig(AppConfig):
    name = "operations"

    def ready(self) -> None:
        from operations import receivers  # noqa: F401 - connects the signal receivers
