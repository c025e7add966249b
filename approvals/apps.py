from django.apps import AppConfig


class ApprovalsConfig(AppConfig):
    name = "approvals"

    def ready(self) -> None:
        from approvals import receivers  # noqa: F401 - connects the signal receivers
