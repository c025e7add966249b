"""Model fields whose values are stored encrypted (kionga.secret_box); declared once here.

The instance holds the plaintext; the column holds ``kx1.<key id>.<ciphertext>``, or ''
for an empty value. Encryption happens in pre_save, where the row is known: the
associated data is the table, the column and the row's identity (``bound_to``, fields
that never change, e.g. the project and the resource's key), so a ciphertext copied
to another row does not decrypt. A value read from the database stays sealed until
the attribute is read, then decrypts once. Writing plaintext around pre_save
(QuerySet.update with a plain string) is refused instead of storing it in the clear.
"""

from __future__ import annotations

import json
from typing import Any

from django.db import models
from django.db.models.query_utils import DeferredAttribute

from kionga import secret_box


class Sealed(str):
    """A value as read from the column: ciphertext, not yet decrypted."""


class _Descriptor(DeferredAttribute):
    field: EncryptedTextField

    def __get__(self, instance: Any, cls: Any = None) -> Any:
        if instance is None:
            return self
        value = super().__get__(instance, cls)
        if isinstance(value, Sealed):
            value = self.field.open(instance, value)
            instance.__dict__[self.field.attname] = value
        return value

    def __set__(self, instance: Any, value: Any) -> None:
        instance.__dict__[self.field.attname] = value


class EncryptedTextField(models.TextField):
    """A secret string; '' stays '' (no secret set)."""

    descriptor_class = _Descriptor

    def __init__(self, *args: Any, bound_to: tuple[str, ...] = (), **kwargs: Any) -> None:
        self.bound_to = tuple(bound_to)
        super().__init__(*args, **kwargs)

    def deconstruct(self) -> Any:
        name, path, args, kwargs = super().deconstruct()
        kwargs["bound_to"] = self.bound_to
        return name, path, args, kwargs

    # The plaintext a value of this field is stored as, and back.
    def encode(self, value: Any) -> str:
        return "" if value is None else str(value)

    def decode(self, text: str) -> Any:
        return text

    def aad(self, instance: Any) -> bytes:
        return secret_box.context(self.model._meta.db_table, str(self.column),
                                  *(getattr(instance, name) for name in self.bound_to))

    def where(self, instance: Any) -> str:
        ident = "/".join(str(getattr(instance, name)) for name in self.bound_to)
        return f"{self.model._meta.label_lower}.{self.name} ({ident})"

    def open(self, instance: Any, stored: str) -> Any:
        if stored == "":
            return self.decode("")
        return self.decode(secret_box.decrypt(str(stored), self.aad(instance),
                                              self.where(instance)))

    def seal(self, instance: Any, value: Any) -> str:
        text = self.encode(value)
        return "" if text == "" else secret_box.encrypt(text, self.aad(instance))

    def pre_save(self, model_instance: Any, add: bool) -> Any:
        value = model_instance.__dict__.get(self.attname)
        if isinstance(value, Sealed):
            return value  # unchanged since read: stored as it is
        return Sealed(self.seal(model_instance, getattr(model_instance, self.attname)))

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Any:
        return None if value is None else Sealed(value)

    def get_prep_value(self, value: Any) -> Any:
        if value is None or value == "" or isinstance(value, Sealed):
            return None if value is None else str(value)
        if isinstance(value, str) and secret_box.is_sealed(value):
            return value
        raise ValueError(f"{self.name}: a secret is saved through the model (save()), "
                         "which encrypts it; never written as plaintext.")

    def to_python(self, value: Any) -> Any:
        return value

    def value_to_string(self, obj: Any) -> str:
        # Serialization (dumpdata) writes the ciphertext, never the plaintext.
        stored = obj.__dict__.get(self.attname)
        return str(stored) if isinstance(stored, Sealed) else self.seal(obj, stored)


class EncryptedJSONField(EncryptedTextField):
    """A secret JSON object (e.g. header name -> value); {} is stored as ''."""

    # The types django-stubs gives the attribute (a dict, like JSONField's).
    _pyi_private_set_type: Any
    _pyi_private_get_type: Any

    def encode(self, value: Any) -> str:
        return json.dumps(value, sort_keys=True) if value else ""

    def decode(self, text: str) -> Any:
        return json.loads(text) if text else {}
