"""Contracts shared by the gateway and the runner: pure Python, no Django.

The component registry, conversions, conditions, normalization (v1 → v2),
the behaviour hash and the validator live here so both sides always agree.
"""
