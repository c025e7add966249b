from django.apps import AppConfig


class TriggersConfig(AppConfig):
    name = "triggers"

    def ready(self) -> None:
        from triggers import receivers  # noqa: F401  (beat's rows go with their triggers)
