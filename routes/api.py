"""flask-smorest wiring: the OpenAPI document, the docs page, and strict JSON request bodies."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping
from typing import Any

import flask_smorest
from apispec import APISpec
from flask import Flask, Request, request
from marshmallow import Schema
from webargs.flaskparser import FlaskParser
from werkzeug.datastructures import CombinedMultiDict, Headers

from domain.errors import BadRequest, NotFound, Unprocessable, UnsupportedMediaType
from routes.requests import unstorable_fields
from routes.responses import ErrorResponse
from tools.jsonschema import extend

BEARER: list[dict[str, list[str]]] = [{"bearer": []}]

DESCRIPTION = """The chat backend's HTTP API.

Every error, 4xx or 5xx (including those of the HTTP server itself: 400, 408, 413, 414, 431),
has one shape: `{"error": {"code": "...", "message": "...", "details": {...}}}`. Input that
fails validation (body, query or header) is 422 `validation_error` with per-field messages in
`details`; malformed JSON is 400 `invalid_json`; a non-JSON body or a charset other than UTF-8
is 415. Text no database can store (a NUL character or a lone surrogate, in any body, query or
header field) is 422 `validation_error` naming the field; an id in a path that no record can
have (one holding a control character or a lone surrogate, or over 128 characters) is 404
`not_found`. Lists are paginated by cursor: pass `next_cursor` back as `cursor` until it is
null.
"""
# The longest id a path may hold: AI SDK chat ids are the longest (128); ours are shorter.
MAX_PATH_ID = 128
# What no id has: control characters (C0, DEL, C1) and lone surrogates.
NOT_IN_IDS = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
# The location of a multipart/form-data body read whole (fields and files): OpenAPI 3 has
# one request body, where flask-smorest's "form" and "files" would document two (the second
# as Swagger 2 `formData` parameters, which OpenAPI 3 does not have).
MULTIPART = "multipart"

OPENAPI_CONFIG: dict[str, Any] = {
    "API_TITLE": "Chat backend",
    "API_VERSION": "1",
    "OPENAPI_VERSION": "3.1.0",
    "OPENAPI_URL_PREFIX": "/",
    "OPENAPI_JSON_PATH": "openapi.json",
    # /docs is routes/site/web.py's page, under its policy.
    "API_SPEC_OPTIONS": {"info": {"description": DESCRIPTION}},
}


class JSONParser(FlaskParser):
    """webargs' parser, reading bodies as RFC 8259 JSON: UTF-8, an object, clear errors; and
    a multipart body's fields and files as one location, so the document has one body."""

    __location_map__ = {**FlaskParser.__location_map__, MULTIPART: "load_multipart"}

    def load_json(self, req: Request, schema: Schema) -> Any:
        """Return the body as a dict; an empty body is {} when no field is required."""
        raw = req.get_data(cache=True)
        if not raw.strip() and not any(f.required for f in schema.load_fields.values()):
            return {}
        if req.mimetype != "application/json":
            raise UnsupportedMediaType("Send the body as application/json.")
        charset = req.mimetype_params.get("charset", "utf-8").lower()
        if charset not in ("utf-8", "utf8"):
            raise UnsupportedMediaType(
                "JSON is UTF-8 (RFC 8259): send charset=utf-8 or no charset.",
                code="unsupported_charset",
                details={"charset": [f"{charset} is not supported."]},
            )
        try:
            body = json.loads(raw)
        except (ValueError, RecursionError) as err:
            raise BadRequest("The request body is not valid JSON.", code="invalid_json") from err
        if not isinstance(body, dict):
            raise Unprocessable(
                "The request body must be a JSON object.",
                details={"_schema": ["Expected a JSON object."]},
            )
        refuse_unstorable(body, schema)
        return body

    def load_multipart(self, req: Request, schema: Schema) -> Any:
        """A multipart/form-data body: its fields and its files together."""
        return self._makeproxy(CombinedMultiDict([req.form, req.files]), schema)

    def load_querystring(self, req: Request, schema: Schema) -> Any:
        """The query string, once no parameter holds text no database can store."""
        refuse_unstorable({name: req.args.getlist(name) for name in req.args}, schema)
        return super().load_querystring(req, schema)

    def load_headers(self, req: Request, schema: Schema) -> Any:
        """The headers, once none the schema reads holds text no database can store."""
        refuse_unstorable(req.headers, schema)
        return super().load_headers(req, schema)


def refuse_unstorable(data: Mapping[str, Any] | Headers, schema: Schema) -> None:
    """422 naming each field of `schema` whose text (anywhere inside it) no database can store:
    one check for every request schema, before any view or database sees the value."""
    names = [field.data_key or name for name, field in schema.load_fields.items()]
    problems = unstorable_fields(data, names)
    if problems:
        raise Unprocessable("The request is invalid.", details=problems)


class Blueprint(flask_smorest.Blueprint):
    """A blueprint whose arguments are parsed by JSONParser."""

    ARGUMENTS_PARSER = JSONParser()
    DEFAULT_LOCATION_CONTENT_TYPE_MAPPING = {
        **flask_smorest.Blueprint.DEFAULT_LOCATION_CONTENT_TYPE_MAPPING,
        MULTIPART: "multipart/form-data",
    }


class Api(flask_smorest.Api):
    """flask-smorest's Api documenting our error shape and leaving errors to routes/errors.

    The document is written when it is first read (/openapi.json), not as each blueprint is
    registered: writing it was two thirds of building the app, paid by every worker and
    every test app that never serves it.
    """

    ERROR_SCHEMA = ErrorResponse

    def __init__(self, app: Flask) -> None:
        self._undocumented: list[tuple[Blueprint, str, list[dict[str, Any]] | None]] = []
        # Paths of plain Flask views, written as given: (tag, its description, path items).
        self._plain: list[tuple[str, str, dict[str, dict[str, Any]]]] = []
        self._documenting = threading.Lock()
        self._flask = app
        super().__init__(app)

    @property
    def spec(self) -> APISpec:
        """The document, with every blueprint registered so far in it."""
        if self._undocumented or self._plain:
            with self._documenting:
                while self._undocumented:
                    blp, name, parameters = self._undocumented.pop(0)
                    blp.register_views_in_doc(
                        self, self._flask, self._spec, name=name, parameters=parameters
                    )
                    self._spec.tag({"name": name, "description": blp.description})
                rules = {rule.rule: rule for rule in self._flask.url_map.iter_rules()}
                while self._plain:
                    tag, description, paths = self._plain.pop(0)
                    self._spec.tag({"name": tag, "description": description})
                    for path, operations in paths.items():
                        tagged = {m: {"tags": [tag], **op} for m, op in operations.items()}
                        self._spec.path(rule=rules[path], operations=tagged)
        return self._spec

    @spec.setter
    def spec(self, value: APISpec) -> None:
        self._spec = value

    def register_blueprint(
        self,
        blp: flask_smorest.Blueprint,
        *,
        parameters: list[dict[str, Any]] | None = None,
        **options: Any,
    ) -> None:
        """Register `blp` in the app now; document it when the document is read."""
        assert isinstance(blp, Blueprint), "routes use routes.api.Blueprint"
        name = options.get("name", blp.name)
        self._flask.extensions["flask-smorest"]["blp_name_to_api"][name] = self
        self._flask.register_blueprint(blp, **options)
        self._undocumented.append((blp, name, parameters))

    def document_plain(self, tag: str, description: str, paths: dict[str, dict[str, Any]]) -> None:
        """Document plain Flask views (they answer in a protocol's own shapes, not the API's)
        by their OpenAPI path items, written when the document is read."""
        self._plain.append((tag, description, paths))

    def _register_error_handlers(self) -> None:
        """routes/error_handler.py renders every error, webargs' 422 included."""


def refuse_unknown_query(app: Flask) -> None:
    """422 for a query parameter the document does not name, or one given more than once."""
    allowed: dict[str, set[str]] = {}
    for endpoint, view in app.view_functions.items():
        doc = getattr(view, "_apidoc", None)
        if doc is None:
            continue  # static files and the docs themselves
        names: set[str] = set()
        for param in doc.get("arguments", {}).get("parameters", []):
            if param["in"] in ("query", "querystring"):
                schema = param["schema"]
                schema = schema() if isinstance(schema, type) else schema
                names |= {f.data_key or n for n, f in schema.load_fields.items()}
        allowed[endpoint] = names

    @app.before_request
    def _known_query_only() -> None:
        names = allowed.get(request.endpoint or "")
        if names is None:
            return
        problems = {name: ["Unknown query parameter."] for name in set(request.args) - names}
        # webargs would take the first of `limit=5&limit=6` silently: which one was meant?
        for name, values in request.args.lists():
            if len(values) > 1:
                problems.setdefault(name, []).append("Given more than once.")
        if problems:
            raise Unprocessable("The request is invalid.", details=dict(sorted(problems.items())))


def refuse_impossible_ids(app: Flask, blueprints: set[str]) -> None:
    """404 for an id in the path of a route of `blueprints` that no record can have, before the
    view or the database sees it (PostgreSQL refuses a NUL in any string it compares)."""

    @app.url_value_preprocessor
    def _possible_ids(_endpoint: str | None, values: dict[str, Any] | None) -> None:
        if request.blueprint not in blueprints:
            return
        for value in (values or {}).values():
            if isinstance(value, str) and (len(value) > MAX_PATH_ID or NOT_IN_IDS.search(value)):
                raise NotFound("resource")


def init_api(app: Flask) -> Api:
    """Create the Api on `app`: /openapi.json, the /docs page, the bearer security scheme."""
    for key, value in OPENAPI_CONFIG.items():
        app.config.setdefault(key, value)
    api = Api(app)
    converter = api.ma_plugin.converter
    assert converter is not None  # Api(app) has made the spec, and with it the converter
    extend(converter)
    api.spec.components.security_scheme(
        "bearer", {"type": "http", "scheme": "bearer", "description": "An API token."}
    )
    return api
