"""Kubernetes quantities as deploys accept them (250m, 0.5, 1, 128Mi, 1Gi), read exactly.

One format, a strict subset of what Kubernetes parses: up to 6 integer digits, up to 3
decimals, an optional suffix. Values are Decimals (CPU in cores, memory in bytes) so
sums and comparisons are exact; tests/test_deployments_quantities.py checks every value
against the official client's `kubernetes.utils.quantity.parse_quantity`. Pure (no
Django, no Kubernetes client): the settings module reads the operator's ceilings with it.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Final

FORMAT: Final = re.compile(r"([0-9]{1,6}(?:\.[0-9]{1,3})?)(m|k|M|G|T|Ki|Mi|Gi|Ti)?")
SCALES: Final[dict[str | None, Decimal]] = {
    None: Decimal(1), "m": Decimal("0.001"),
    "k": Decimal(10) ** 3, "M": Decimal(10) ** 6, "G": Decimal(10) ** 9, "T": Decimal(10) ** 12,
    "Ki": Decimal(2) ** 10, "Mi": Decimal(2) ** 20, "Gi": Decimal(2) ** 30, "Ti": Decimal(2) ** 40,
}
EXAMPLE: Final = "a positive Kubernetes quantity, e.g. 250m, 2, 128Mi or 1Gi"
MILLI: Final = Decimal("0.001")
MEBI: Final = SCALES["Mi"]


def parse(text: str) -> Decimal:
    """The value of `text` (cores or bytes); ValueError when it is not in FORMAT."""
    match = FORMAT.fullmatch(text)
    if match is None:
        raise ValueError(f"{text!r} is not {EXAMPLE}")
    return Decimal(match[1]) * SCALES[match[2]]


def cpu(text: str) -> Decimal:
    """Cores: positive, in whole millicores (Kubernetes allows no finer CPU)."""
    value = positive(text)
    if value % MILLI:
        raise ValueError(f"{text!r} is finer than 1m (a thousandth of a CPU)")
    return value


def memory(text: str) -> Decimal:
    """Bytes: positive and whole (128m would be 0.128 bytes: 128Mi is meant)."""
    value = positive(text)
    if value % 1:
        raise ValueError(f"{text!r} is not a whole number of bytes (m is a thousandth; "
                         "write Mi for mebibytes)")
    return value


def positive(text: str) -> Decimal:
    value = parse(text)
    if value <= 0:
        raise ValueError(f"{text!r} is not {EXAMPLE}")
    return value


def cpu_setting(text: str) -> str:
    """An operator's CPU ceiling, checked and kept as written (for messages)."""
    cpu(text)
    return text


def memory_setting(text: str) -> str:
    """An operator's memory ceiling, checked and kept as written (for messages)."""
    memory(text)
    return text


def cores_text(value: Decimal) -> str:
    """Cores as a quantity people read: 25, 1.5, 250m."""
    if value % 1 and value < 1:
        return f"{_plain(value * 1000)}m"
    return _plain(value)


def bytes_text(value: Decimal) -> str:
    """Bytes as a quantity people read, in Mi (or Gi when whole): 12800Mi, 32Gi."""
    if value % SCALES["Gi"] == 0 and value:
        return f"{_plain(value / SCALES['Gi'])}Gi"
    return f"{_plain(value / MEBI)}Mi"


def _plain(value: Decimal) -> str:
    """A Decimal without exponent or trailing zeros, rounded to 3 decimals (formatting,
    unlike quantize, never runs out of the context's precision)."""
    return f"{value:.3f}".rstrip("0").rstrip(".")
