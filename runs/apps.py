from django.apps import AppConfig


class RunsConfig(AppConfig):
    name = "runs"

    def ready(self) -> None:
        # Starting a run and opening its stream, served ahead of Django (runs.hot).
        from kionga import hot_routes
        from runs.hot import asgi

        hot_routes.register(asgi.match)
