"""Runtimes for published versions. Pure Python (no Django): the runner image ships it."""
