"""The served OpenAPI document matches behaviour: schemathesis generates requests for every operation
of a running `asmr serve` (with a write key, so ingest runs too) and checks that no response is a
5xx and that every status, content type and body is one the document declares."""
from __future__ import annotations

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (content_type_conformance, response_schema_conformance,
                                               status_code_conformance)

from serverproc import READ_KEY, WRITE, WRITE_KEY, Server, build_memory

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    d = tmp_path_factory.mktemp("openapi")
    s = Server(build_memory(d / "memory"), d / "log", "--rate-limit", "0", "--max-body", "100000",
               keys=f"{READ_KEY},{WRITE_KEY}:write").wait()
    # one answer first: the conversation exists, and the support model is loaded before the fuzzing starts
    httpx.post(s.url + "/v1/answer", json={"question": "Which port does the API server listen on?",
                                           "conversation": "c1"}, headers=WRITE, timeout=120)
    yield s
    s.stop()
    log = s.log.read_text()
    assert "Traceback" not in log, log[-3000:]


def test_every_operation_conforms(served):
    # Driven by hand rather than with schemathesis.pytest.from_fixture, which breaks on pytest 9
    # (it reads a private attribute of the test node).
    api = schemathesis.openapi.from_url(served.url + "/openapi.json")
    operations = [result.ok() for result in api.get_all_operations()]
    assert len(operations) == 9
    for operation in operations:
        @given(case=operation.as_strategy())
        @settings(max_examples=5, deadline=None, derandomize=True, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                         HealthCheck.data_too_large])
        def conforms(case):
            case.call_and_validate(headers=WRITE, checks=CHECKS, timeout=60)
        conforms()
    # Generated data rarely hits the success paths of these: check them with real requests too.
    by_label = {op.label: op for op in operations}
    answer = httpx.post(served.url + "/v1/answer", json={"question": "How long does a rollout take?",
                                                         "conversation": "c1"}, headers=WRITE).json()
    chat = {"model": "asmr", "messages": [{"role": "user", "content": "Which port does the API use?"}]}
    explicit = [
        ("POST /v1/chat/completions", dict(body=chat)),
        ("POST /v1/chat/completions", dict(body={**chat, "stream": True})),
        ("POST /v1/verify", dict(body={"answer": answer["answer"], "conversation": "c1"})),
        ("GET /v1/units/{unit_id}", dict(path_parameters={"unit_id": answer["citations"][0]["unit_id"]})),
        ("POST /v1/ingest", dict(body={"documents": [{"id": "extra", "text": "The cafeteria opens at 7 am.",
                                                      "type": "faq", "effective_date": "2026-01-02"}]})),
        ("POST /v1/search", dict(body={"question": "When does the cafeteria open?", "k": 3})),
    ]
    for label, data in explicit:
        response = by_label[label].Case(**data).call_and_validate(headers=WRITE, checks=CHECKS, timeout=60)
        assert response.status_code == 200, (label, response.text[:300])


def test_document_lists_the_error_shape(served):
    doc = httpx.get(served.url + "/openapi.json").json()
    assert "HTTPValidationError" not in doc["components"]["schemas"]
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            if path != "/healthz":
                for status in ("401", "422", "429"):
                    ref = op["responses"][status]["content"]["application/json"]["schema"]["$ref"]
                    assert ref.endswith("/ErrorResponse"), (method, path, status)
    assert set(doc["paths"]) >= {"/v1/search", "/v1/answer", "/v1/verify", "/v1/units/{unit_id}", "/v1/ingest",
                                 "/healthz", "/metrics", "/v1/chat/completions", "/v1/models"}
    search = doc["components"]["schemas"]["SearchRequest"]
    assert set(search["properties"]) == {"question", "k"} and search["required"] == ["question"]
    docs = doc["components"]["schemas"]["IngestDocument"]
    assert {"id", "text", "title", "type", "effective_date"} <= set(docs["properties"])
    assert sorted(docs["required"]) == ["id", "text"]
