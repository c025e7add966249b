"""The agent-graph runner: a pure-Python engine that interprets normalized graphs.

Public entry points live in `runner.engine` (`run_graph`, `run_graph_sync`) and
`runner.request` (`RunRequest`, `RunResult`, `LLMConfig`). Nothing here imports
Django: the runner holds no database credentials and is testable alone.
"""
