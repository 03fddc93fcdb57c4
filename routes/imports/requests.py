"""Request schemas of the statement import endpoints: the upload form, queries, a row's change."""

from __future__ import annotations

import json
from typing import Any

from marshmallow import Schema, ValidationError, fields, validate

from models.imports import ROW_STATUSES
from routes.requests import NO_NUL
from statements.columns import OPTIONS, ROLES
from statements.read import FORMATS

MAX_PAGE = 100
ID_CURSOR = r"\A[0-9]{1,10}\Z"


class MappingField(fields.Field[dict[str, str]]):
    """A CSV mapping sent as a JSON object in a form field: role -> column name, and options
    (`sign`, `date_order`) -> their value."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        try:
            parsed = json.loads(value) if isinstance(value, str) else value
        except ValueError as err:
            raise ValidationError("Must be a JSON object of role to column name.") from err
        if not isinstance(parsed, dict) or not all(
            isinstance(k, str) and isinstance(v, str) and "\x00" not in v for k, v in parsed.items()
        ):
            raise ValidationError("Must be a JSON object of role to column name.")
        unknown = sorted(set(parsed) - set(ROLES) - set(OPTIONS))
        if unknown:
            raise ValidationError(
                f"Unknown roles {unknown}: roles are {', '.join(ROLES)}; "
                f"options are {', '.join(OPTIONS)}."
            )
        for option, allowed in OPTIONS.items():
            if option in parsed and parsed[option] not in allowed:
                raise ValidationError(f"{option} is one of {', '.join(allowed)}.")
        return parsed


def _text(maximum: int, doc: str) -> fields.String:
    return fields.String(
        validate=[validate.Length(min=1, max=maximum), validate.Regexp(NO_NUL)],
        metadata={"description": doc},
    )


class ImportForm(Schema):
    """The fields of POST /api/imports besides the file."""

    account_id = fields.Integer(
        validate=validate.Range(min=1, max=2147483647),
        metadata={"description": "The account the rows belong to (files without account details)."},
    )
    account_name = _text(80, "Name of the account a statement creates when none holds it.")
    format = fields.String(
        validate=validate.OneOf(FORMATS),
        metadata={"description": "The file's format; detected from its content when omitted."},
    )
    currency = fields.String(
        validate=validate.Regexp(r"\A[A-Za-z]{3}\Z"),
        metadata={"description": "ISO 4217 code, for files that do not say (QIF, most CSV)."},
    )
    locale = _text(20, "How the file writes amounts and dates, e.g. de_DE (CSV, QIF).")
    mapping = MappingField(
        metadata={
            "type": "string",
            "description": "CSV only: a JSON object of role (date, amount or debit and credit, "
            "payee, description, and the others of docs/imports.md) to column name, and "
            "options: sign (as_written or charges_positive), date_order (dmy, mdy or ymd); "
            "saved for the account.",
        }
    )


class ImportFile(Schema):
    """The uploaded statement."""

    file = fields.Raw(
        required=True,
        metadata={"type": "string", "format": "binary", "description": "The statement file."},
    )


class ImportUpload(ImportForm, ImportFile):
    """The whole multipart body of POST /api/imports, as the OpenAPI document shows it."""


class PageQuery(Schema):
    """A page of imports."""

    limit = fields.Integer(load_default=20, validate=validate.Range(min=1, max=MAX_PAGE))
    cursor = fields.String(validate=validate.Regexp(ID_CURSOR))


class RowsQuery(PageQuery):
    """A page of an import's rows, optionally of one status."""

    limit = fields.Integer(load_default=50, validate=validate.Range(min=1, max=MAX_PAGE))
    status = fields.String(validate=validate.OneOf(ROW_STATUSES))


class RowChange(Schema):
    """Body of PATCH /api/imports/<id>/rows/<row_id>."""

    include = fields.Boolean()
    category = fields.String(
        allow_none=True, validate=[validate.Length(min=1, max=80), validate.Regexp(NO_NUL)]
    )
