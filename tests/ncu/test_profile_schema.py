"""contract/profile.schema.json describes what `tritonify diagnose --format json` and `tritonify
profile --format json` emit now: real outputs made from the H200 fixtures of every capture kind
(patterns, not_assessed entries from a `--set detailed` raw page read without its source pages,
limiters on the CUDA controls) validate."""
import copy
import json
from pathlib import Path

import jsonschema
import pytest

from tritonify.diagnostics.ncu.render import to_json_list

from .test_capture_sets import KINDS, SETS, _gz, diagnoses

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "contract" / "profile.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def _launches(kind: str) -> list[dict]:
    if kind == "detailed_without_source":   # no WarpStateStats and no source page: E, C, D, ... lack their metrics
        from tritonify.diagnostics.ncu.diagnose import diagnose_pages

        ds = diagnose_pages(_gz(SETS / "detailed" / "raw.csv.gz"), _gz(SETS / "detailed" / "details.csv.gz"), [])
    else:
        ds = list(diagnoses(kind).values())
    return json.loads(json.dumps(to_json_list(ds, extra={"report": f"/tmp/{kind}.ncu-rep", "gpu": {"name": "NVIDIA H200"}})))


@pytest.mark.parametrize("kind", (*KINDS, "detailed_without_source"))
def test_diagnose_and_profile_outputs_follow_the_schema(kind):
    launches = _launches(kind)
    VALIDATOR.validate(launches)                                   # diagnose --format json
    VALIDATOR.validate({"schema": "tritonify.profile/1", "status": "ok", "summary": "x", "report": "/tmp/r.ncu-rep",
                        "gpu": {"name": "NVIDIA H200"}, "launches": launches[:1]})   # profile --format json


def test_the_fixtures_exercise_not_assessed_and_the_limiter():
    lacking = _launches("detailed_without_source")
    assert any(L["not_assessed"] for L in lacking)
    assert any(L["limiter"] and L["limiter"]["pattern"] == "Z" for L in _launches("triage"))


def test_the_schema_rejects_a_malformed_not_assessed_or_limiter():
    good = next(L for L in _launches("detailed_without_source") if L["not_assessed"])
    bad = copy.deepcopy(good)
    del bad["not_assessed"][0]["lacks"]
    with pytest.raises(jsonschema.ValidationError):
        VALIDATOR.validate([bad])
    lim = copy.deepcopy(next(L for L in _launches("triage") if L["limiter"]))
    lim["limiter"]["pattern"] = "C"
    with pytest.raises(jsonschema.ValidationError):
        VALIDATOR.validate([lim])
    nolist = copy.deepcopy(good)
    nolist["patterns"] = [{"pattern": "C"}]
    with pytest.raises(jsonschema.ValidationError):
        VALIDATOR.validate([nolist])
