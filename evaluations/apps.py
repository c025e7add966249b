from django.apps import AppConfig


class EvaluationsConfig(AppConfig):
    name = "evaluations"

    def ready(self) -> None:
        from designs.quality_gate import register_finder
        from evaluations import receivers  # noqa: F401 - connects the signal receivers
        from evaluations.actions import gate_evaluation

        register_finder(gate_evaluation)
