"""The encrypted columns as a whole: which key ids they use, and moving them all to the
first key of KIONGA_SECRET_KEYS (`manage.py reencrypt_secrets`).

The columns are found from the models (every kionga.secret_fields field), never listed
by hand.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from django.apps import apps
from django.db import DatabaseError, models, transaction
from django.db.models import F, Func, Value

from kionga import secret_box
from kionga.secret_fields import EncryptedTextField


def encrypted_fields() -> Iterator[tuple[type[models.Model], EncryptedTextField]]:
    for model in apps.get_models():
        for field in model._meta.get_fields():
            if isinstance(field, EncryptedTextField):
                yield model, field


def _key_ids(model: type[models.Model], field: EncryptedTextField) -> Counter[str]:
    kid = Func(F(field.name), Value("."), Value(2), function="split_part",
               output_field=models.TextField())
    rows = (model._default_manager.filter(**{f"{field.name}__startswith": "kx1."})
            .annotate(kid=kid).values_list("kid").annotate(n=models.Count("pk")))
    return Counter({str(k): int(n) for k, n in rows})


def key_id_counts() -> dict[str, Counter[str]]:
    """Per column (app.model.field): how many stored values each key id encrypted."""
    return {f"{model._meta.label_lower}.{field.name}": _key_ids(model, field)
            for model, field in encrypted_fields()}


def unknown_key_problems() -> list[str]:
    """What stored values no configured key decrypts (a clear message each)."""
    known = set(secret_box.configured_keys().ids)
    try:
        counts = key_id_counts()
    except DatabaseError:
        return []  # the tables are not migrated yet: `migrate` encrypts what is there
    return [f"{column}: {n} stored secret(s) are encrypted under key id {kid}, which is not "
            f"in {secret_box.SETTING} (a wrong key, or an old key removed before "
            "`manage.py reencrypt_secrets` finished)."
            for column, found in sorted(counts.items())
            for kid, n in sorted(found.items()) if kid and kid not in known]


def reencrypt_all(batch: int = 200) -> dict[str, int]:
    """Every stored value not under the first key, re-encrypted under it; one
    transaction per row, so an interrupted run resumes where it stopped. Counts per
    column."""
    first = secret_box.configured_keys().ids[0]
    done: dict[str, int] = {}
    for model, field in encrypted_fields():
        column = f"{model._meta.label_lower}.{field.name}"
        done[column] = 0
        stale = (model._default_manager.exclude(**{field.name: ""})
                 .exclude(**{f"{field.name}__startswith": f"{secret_box.PREFIX}.{first}."}))
        last = 0
        while True:
            ids = list(stale.filter(pk__gt=last).order_by("pk")
                       .values_list("pk", flat=True)[:batch])
            if not ids:
                break
            for pk in ids:
                done[column] += _reencrypt_row(model, field, pk)
            last = ids[-1]
    return done


def _reencrypt_row(model: type[models.Model], field: EncryptedTextField, pk: Any) -> int:
    with transaction.atomic():
        row = model._default_manager.select_for_update().filter(pk=pk).first()
        if row is None:
            return 0
        value = getattr(row, field.attname)  # decrypts (under any configured key)
        setattr(row, field.attname, value)  # plaintext again: save() seals it anew
        row.save(update_fields=[field.name])
        return 1
