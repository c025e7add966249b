from django.apps import AppConfig


class KiongaConfig(AppConfig):
    name = "kionga"
    verbose_name = "Kionga platform"

    def ready(self) -> None:
        # Imported for their registration side effects (system checks, schema extensions).
        from kionga import checks, schema  # noqa: F401
