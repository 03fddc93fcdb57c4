"""Marshmallow schemas of the statement import endpoints: the upload form, queries, replies."""

from __future__ import annotations

import json
from typing import Any

from marshmallow import Schema, ValidationError, fields, validate

from models.imports import IMPORT_STATUSES, ROW_STATUSES
from routes.requests import NO_NUL
from routes.responses import Open
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


class Reconciliation(Open):
    """Opening balance plus rows against the closing balance the file states."""

    basis = fields.String(metadata={"enum": ["file", "account", "derived"]})
    opening = fields.String()
    rows_total = fields.String()
    closing = fields.String()
    difference = fields.String(metadata={"description": "closing - (opening + rows)."})
    balanced = fields.Boolean()
    chained = fields.Boolean(
        allow_none=True,
        metadata={
            "description": "Whether the opening balance the file states is the closing balance "
            "of the same account's statement before it in the file (null: no such statement)."
        },
    )


class ImportAccount(Open):
    """A statement of the file and the account it lands in."""

    account_id = fields.Integer(allow_none=True)
    account_name = fields.String(allow_none=True)
    new_account = fields.Boolean()
    bank_ref = fields.String(allow_none=True)
    bank_name = fields.String(
        allow_none=True, metadata={"description": "The bank, as the file names it."}
    )
    last_digits = fields.String(
        allow_none=True, metadata={"description": "The last digits of the account number."}
    )
    kind = fields.String(metadata={"enum": ["checking", "savings", "credit_card"]})
    currency = fields.String()
    reconciliation = fields.Nested(Reconciliation, allow_none=True)


class Progress(Open):
    """How far the step under way (drafting, committing, undoing) is, or the last one got."""

    done = fields.Integer(metadata={"description": "Rows stored, added or removed so far."})
    total = fields.Integer(metadata={"description": "Rows the step has in all."})
    stalled = fields.Boolean(
        metadata={
            "description": "The step wrote nothing for IMPORT_STALL seconds: its worker is "
            "gone. Commit resumes a stalled commit; DELETE discards a stalled draft and "
            "undoes a stalled commit or undo."
        }
    )


class ImportRecord(Open):
    """An import: drafting, a draft, committing, committed, undoing or undone."""

    id = fields.Integer(required=True)
    status = fields.String(
        required=True,
        metadata={
            "enum": list(IMPORT_STATUSES),
            "description": "drafting, committing and undoing last while the rows are written "
            "a batch at a time (`progress` says how far); draft, committed and undone are "
            "where an import rests.",
        },
    )
    format = fields.String(required=True)
    filename = fields.String()
    created_at = fields.String()
    committed_at = fields.String(allow_none=True)
    counts = fields.Dict(keys=fields.String(), values=fields.Integer())
    accounts = fields.List(fields.Nested(ImportAccount))
    not_imported = fields.List(
        fields.String(),
        metadata={"description": "What the file holds that was not imported, e.g. trades."},
    )
    progress = fields.Nested(Progress)
    same_file_as = fields.Integer(
        allow_none=True,
        metadata={
            "description": "An earlier committed import of the same file (by content): this "
            "one's statements go to its accounts, and its rows are all duplicates."
        },
    )


class ImportPage(Schema):
    """A page of imports, newest first."""

    imports = fields.List(fields.Nested(ImportRecord), required=True)
    next_cursor = fields.String(required=True, allow_none=True)


class Match(Open):
    """The existing transaction a row duplicates or may duplicate."""

    id = fields.Integer()
    date = fields.String()
    amount = fields.String()
    merchant = fields.String()
    description = fields.String()


class ImportRowRecord(Open):
    """A row of an import."""

    id = fields.Integer(required=True)
    position = fields.Integer()
    account_id = fields.Integer(allow_none=True)
    date = fields.String(allow_none=True)
    amount = fields.String(allow_none=True)
    currency = fields.String()
    merchant = fields.String()
    description = fields.String()
    bank_id = fields.String(allow_none=True)
    status = fields.String(metadata={"enum": list(ROW_STATUSES)})
    reason = fields.String(allow_none=True)
    include = fields.Boolean()
    category = fields.String(allow_none=True)
    matches = fields.Nested(Match, allow_none=True)


class RowPage(Schema):
    """A page of an import's rows, in file order."""

    rows = fields.List(fields.Nested(ImportRowRecord), required=True)
    next_cursor = fields.String(required=True, allow_none=True)


class CommitResult(ImportRecord):
    """The committed import and how many transactions this request added."""

    added = fields.Integer()


class UndoResult(Schema):
    """What DELETE did: discarded a draft or undid a committed import."""

    id = fields.Integer(required=True)
    status = fields.String(required=True, metadata={"enum": ["discarded", "undone"]})
    removed_transactions = fields.Integer(required=True)
