"""Response schemas of the statement import endpoints: an import, its rows, what a commit or an
undo did."""

from __future__ import annotations

from marshmallow import Schema, fields

from models.imports import IMPORT_STATUSES, ROW_STATUSES
from routes.responses import Open


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
