"""/openapi.json is a valid OpenAPI 3.1 document, as client generators and validators read it
(openapi-spec-validator); schemathesis fuzzes the API from it (test_schemathesis.py)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from openapi_spec_validator import validate
from openapi_spec_validator.validation.exceptions import OpenAPIValidationError

# One app for the module's tests, its database emptied after each (tests/conftest.py).
pytestmark = pytest.mark.shared_app


@pytest.fixture
def document(client: Any) -> dict[str, Any]:
    response = client.get("/openapi.json")
    assert response.status_code == 200
    found: dict[str, Any] = response.get_json()
    return found


def test_the_document_is_valid_openapi_3(document: dict[str, Any]) -> None:
    assert document["openapi"].startswith("3.")
    validate(document)


def test_the_upload_is_one_multipart_body(document: dict[str, Any]) -> None:
    upload = document["paths"]["/api/imports"]["post"]
    assert "parameters" not in upload
    body = upload["requestBody"]
    assert body["required"] is True
    assert body["content"]["multipart/form-data"]["schema"] == {
        "$ref": "#/components/schemas/ImportUpload"
    }
    fields = document["components"]["schemas"]["ImportUpload"]
    assert fields["required"] == ["file"]
    assert fields["properties"]["file"] == {
        "type": "string",
        "format": "binary",
        "description": "The statement file.",
    }


def test_a_swagger_2_location_is_refused(document: dict[str, Any]) -> None:
    """The validator reads the document as OpenAPI 3: `in: formData` (Swagger 2) fails it."""
    broken = copy.deepcopy(document)
    broken["paths"]["/api/imports"]["post"]["parameters"] = [
        {"in": "formData", "name": "locale", "schema": {"type": "string"}}
    ]
    with pytest.raises(OpenAPIValidationError):
        validate(broken)
