"""Settings read from the environment: the `WORKBANK_*` variable of each field, and a settings
class built from them, every value parsed as its field's type and checked by the class, a bad one a
ValueError naming its variable. The settings resources (settings.py) and the chat model's
(labeling/chat_model.py) are read through it; it reads no variable itself, it is given them."""

from __future__ import annotations

import typing
from collections.abc import Mapping

import pydantic

# The variables whose names are not `WORKBANK_` + the field's name in capitals (kept as documented).
_ENVIRONMENT_NAMES = {
    "judgement_cache_path": "WORKBANK_JUDGEMENT_CACHE",
    "n_candidate_occupations": "WORKBANK_CANDIDATE_OCCUPATIONS",
}


def environment_variable(field: str) -> str:
    """The environment variable of a setting (a field of PathSettings, MethodSettings,
    EmbeddedJudgeSettings or InstanceSettings)."""
    return _ENVIRONMENT_NAMES.get(field, f"WORKBANK_{field.upper()}")


def _parse(raw: str, annotation) -> object:
    """An environment string as the field's type; a ValueError says what was expected."""
    kind = typing.get_origin(annotation) or annotation
    if kind is list:
        return [_parse(part.strip(), typing.get_args(annotation)[0]) for part in raw.split(",") if part.strip()]
    if kind is int:
        try:
            number = float(raw)
        except ValueError:
            raise ValueError("expected a whole number") from None
        if number != int(number):
            raise ValueError("expected a whole number")
        return int(number)
    if kind is float:
        try:
            return float(raw)
        except ValueError:
            raise ValueError("expected a number") from None
    return raw


def from_environment(cls, environ: Mapping[str, str], variable_of, **given) -> pydantic.BaseModel:
    """A resource (or settings model) of class `cls` with each field set from the environment variable `variable_of(field)`
    when that variable is set and not empty (fields in `given` are set so instead); a bad value is a
    ValueError naming its variable."""
    hints = typing.get_type_hints(cls)
    values, sources = dict(given), {}
    for name in cls.model_fields:
        if name in given:
            continue
        variable = variable_of(name)
        raw = environ.get(variable)
        if raw is None or raw == "":
            continue
        try:
            values[name] = _parse(raw, hints[name])
        except ValueError as exc:
            raise ValueError(f"setting {variable}={raw!r}: {exc}") from None
        sources[name] = (variable, raw)
    try:
        return cls(**values)
    except pydantic.ValidationError as exc:
        error = exc.errors()[0]
        name = str(error["loc"][0]) if error["loc"] else ""
        variable, raw = sources.get(name, (name, values.get(name)))
        raise ValueError(f"setting {variable}={raw!r}: {error['msg'].removeprefix('Value error, ')}") from None
