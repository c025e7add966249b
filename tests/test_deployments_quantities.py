"""Kubernetes quantities (kionga.quantities) read as the official client reads them, and
a deploy body's resources are accepted exactly when each request is at most its limit
and each limit at most the installation's pod ceiling (properties, with the client's
`parse_quantity` as the oracle). The operator's ceilings are read strictly."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.conf import settings
from hypothesis import given
from hypothesis import strategies as st
from kubernetes.utils.quantity import parse_quantity
from rest_framework.exceptions import ValidationError

from deployments.ceilings import POD_CEILINGS, check_pod_limits
from deployments.serializers import DeploySerializer
from kionga import quantities
from kionga.errors import APIError
from kionga.request_body import parse
from runner.env import Env, EnvError

SUFFIXES = ["", "m", "k", "M", "G", "T", "Ki", "Mi", "Gi", "Ti"]
NUMBERS = st.builds(lambda whole, decimals: whole + (f".{decimals}" if decimals else ""),
                    st.from_regex(r"[0-9]{1,6}", fullmatch=True),
                    st.one_of(st.just(""), st.from_regex(r"[0-9]{1,3}", fullmatch=True)))
QUANTITIES = st.builds(str.__add__, NUMBERS, st.sampled_from(SUFFIXES))
# Pod-sized quantities, around the default ceilings (2 CPUs, 2Gi).
CPUS = st.builds(str.__add__, st.integers(1, 3000).map(str), st.sampled_from(["m", ""]))
MEMORIES = st.builds(str.__add__, st.integers(1, 3000).map(str), st.sampled_from(["Mi", "Gi"]))


@given(QUANTITIES)
def test_it_reads_quantities_as_kubernetes_does(text: str) -> None:
    assert quantities.parse(text) == parse_quantity(text)


@pytest.mark.parametrize("text", ["", "1e3", "1E3", "-1", "+1", " 1", "1 ", "1\n", "NaN",
                                  "Infinity", "0x10", "1.2345", "1234567", "1.", ".5", "1ki",
                                  "1Ei", "1P", "١", "1_000"])
def test_it_refuses_anything_else(text: str) -> None:
    with pytest.raises(ValueError):
        quantities.parse(text)


def test_cpu_and_memory_are_whole_millicores_and_bytes() -> None:
    assert quantities.cpu("250m") == Decimal("0.25") and quantities.memory("1Ki") == 1024
    for wrong in (lambda: quantities.cpu("1.5m"), lambda: quantities.memory("128m"),
                  lambda: quantities.cpu("0"), lambda: quantities.memory("0.0Mi")):
        with pytest.raises(ValueError):
            wrong()


@given(requests_cpu=CPUS, limits_cpu=CPUS, requests_memory=MEMORIES, limits_memory=MEMORIES)
def test_resources_are_accepted_exactly_within_their_bounds(
        requests_cpu: str, limits_cpu: str, requests_memory: str, limits_memory: str) -> None:
    requests = {"cpu": requests_cpu, "memory": requests_memory}
    limits = {"cpu": limits_cpu, "memory": limits_memory}
    expected = all(parse_quantity(requests[kind]) <= parse_quantity(limits[kind])
                   <= parse_quantity(getattr(settings, setting))
                   for kind, setting in POD_CEILINGS.items())
    assert accepted({"resources": {"requests": requests, "limits": limits}}) is expected


def accepted(body: dict[str, Any]) -> bool:
    try:
        check_pod_limits(parse(DeploySerializer, body)["resources"])
    except APIError as exc:  # the pod ceiling
        assert exc.code == "invalid_request"
        return False
    except ValidationError:  # the body: a request above its limit
        return False
    return True


@given(QUANTITIES)
def test_it_spells_totals_as_the_same_values(text: str) -> None:
    value = quantities.parse(text)
    # Rounded to a thousandth of the unit shown (m, cores, Mi, Gi).
    assert abs(parse_quantity(quantities.cores_text(value)) - value) <= Decimal("0.0005")
    assert abs(parse_quantity(quantities.bytes_text(value)) - value) <= (
        quantities.MEBI / 2000)


def test_the_operators_ceilings_are_read_strictly() -> None:
    env = Env({"KIONGA_AGENT_MAX_CPU": "2 CPUs", "KIONGA_AGENT_MAX_MEMORY": "512m"})
    with pytest.raises(EnvError, match="KIONGA_AGENT_MAX_CPU must be a positive Kubernetes"):
        env.parsed("KIONGA_AGENT_MAX_CPU", "2", quantities.cpu_setting, quantities.EXAMPLE)
    with pytest.raises(EnvError, match="KIONGA_AGENT_MAX_MEMORY"):
        env.parsed("KIONGA_AGENT_MAX_MEMORY", "2Gi", quantities.memory_setting,
                   quantities.EXAMPLE)
    assert Env({"X": " 1500m "}).parsed("X", "2", quantities.cpu_setting, "") == "1500m"
