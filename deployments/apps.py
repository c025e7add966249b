from django.apps import AppConfig


class DeploymentsConfig(AppConfig):
    name = "deployments"

    def ready(self) -> None:
        from deployments import receivers  # noqa: F401  (the versions list's deployments)
