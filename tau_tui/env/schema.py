"""From a domain's pydantic DB model to state trees, and back for validation.

tau2 keeps each DB as a pydantic model. We validate the data once with the
domain's model (so coercions and defaults are exactly tau2's), dump it in
Python mode, and keep the plain tree. Top-level ``dict[str, Model]`` fields
become ``Collection`` objects so that episodes share the pristine entities.
"""

from __future__ import annotations

import typing
from functools import cached_property
from typing import Any

from pydantic import BaseModel, TypeAdapter

from tau_tui.env.store import Collection, CollectionBase, Store, clone, to_plain


def _dict_value_type(annotation: Any) -> Any | None:
    origin = typing.get_origin(annotation)
    if origin in (dict, typing.Dict):  # noqa: UP006 - typing.Dict appears in user models
        args = typing.get_args(annotation)
        if len(args) == 2 and isinstance(args[1], type) and issubclass(args[1], BaseModel):
            return args[1]
    return None


class DBSchema:
    """The shape of one side's DB, given by a pydantic model class."""

    def __init__(self, model: type[BaseModel]):
        self.model = model
        self.kind = model.__name__

    @cached_property
    def collection_fields(self) -> dict[str, type[BaseModel]]:
        """Top-level fields holding ``dict[str, Model]``: these become collections."""
        out = {}
        for name, info in self.model.model_fields.items():
            entity = _dict_value_type(info.annotation)
            if entity is not None:
                out[name] = entity
        return out

    def _field_adapter(self, name: str) -> TypeAdapter[Any]:
        annotation = self.model.model_fields[name].annotation  # None only for a field without one
        return TypeAdapter(Any if annotation is None else annotation)

    def tree(self, data: Any) -> dict[str, Any]:
        """Validate raw data with the model and return the state tree (collections wrapped)."""
        dumped = self.model.model_validate(data).model_dump()
        return self.wrap(dumped)

    def wrap(self, dumped: dict[str, Any]) -> dict[str, Any]:
        return {
            key: Collection(CollectionBase(value))
            if key in self.collection_fields and isinstance(value, dict)
            else value
            for key, value in dumped.items()
        }

    def validate_entity(self, field: str, value: Any) -> Any:
        """Coerce one entity of a collection field the way the model would."""
        entity = self.collection_fields[field]
        return entity.model_validate(value).model_dump()

    def validate_field(self, field: str, value: Any) -> Any:
        """Coerce one top-level field value the way the model would."""
        if field not in self.model.model_fields:
            raise ValueError(f"1 validation error for {self.kind}\n{field}\n  Extra inputs are not permitted")
        adapter = self._field_adapter(field)
        return adapter.dump_python(adapter.validate_python(value))


def deep_merge(target: Any, patch: dict[str, Any]) -> Any:
    """addict-style merge, as tau2 applies ``initialization_data``: dicts merge, anything else replaces."""
    for key, value in patch.items():
        current = target.get(key) if isinstance(target, (dict, Collection)) else None
        if isinstance(value, dict) and isinstance(current, dict):
            deep_merge(current, value)
        else:
            target[key] = clone(value)
    return target


def apply_patch(store: Store, schema: DBSchema | None, patch: dict[str, Any]) -> None:
    """Merge ``patch`` into the store and re-validate the parts it touched."""
    if schema is None:
        root = store.edit()
        deep_merge(root, patch)
        return
    for key, value in patch.items():
        root = store.root
        if key in schema.collection_fields and isinstance(value, dict) and isinstance(root.get(key), Collection):
            for entity_key, entity_patch in value.items():
                coll = root[key]
                if entity_key in coll and isinstance(entity_patch, dict) and isinstance(coll[entity_key], dict):
                    merged = deep_merge(clone(coll[entity_key]), entity_patch)
                else:
                    merged = clone(entity_patch)
                store.set(key, entity_key, schema.validate_entity(key, merged))
            continue
        current = to_plain(root.get(key))
        if isinstance(value, dict) and isinstance(current, dict):
            merged = deep_merge(clone(current), value)
        else:
            merged = clone(value)
        validated = schema.validate_field(key, merged)
        if key in schema.collection_fields and isinstance(validated, dict):
            validated = Collection(CollectionBase(validated))
        store.set(key, validated)
