"""TRI052 triton-api-not-in-every-admitted-version: a `triton.language` name, keyword or method
that one Triton version the project admits has and another lacks.

TRI026's data (`diagnostics/triton_api/api.json`, every release from 3.2 to the newest) judged
against the versions the project runs (`triton_api.target`: the `triton-version` setting, the
project's `triton`/`torch` requirement, its venv, else every recorded version). Where the name is
missing on every one of them the kernel does not compile and TRI026 reports it (an error); where it
is missing on some only, the kernel compiles on the Triton the user has today and breaks on an
upgrade (or a downgrade) the project's requirements allow: `tl.advance` and `boundary_check=` on a
project that admits Triton 3.9 (which removed block pointers), `tl.cat(..., dim=)` on one that
admits 3.6 (which lacks the keyword). That is a porting note, not a compile error: a warning,
opt-in (a project on torch's pinned Triton never meets it; round 5 of the real-world study
labelled 19 of 20 such findings NOISE when they were errors).
"""
from __future__ import annotations

from collections.abc import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Finding, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton.tri026_unknown_triton_api import problems

RULE = Rule(
    code="TRI052",
    name="triton-api-not-in-every-admitted-version",
    summary="triton.language name or keyword that some Triton version the project admits lacks (a porting note)",
    severity=Severity.WARNING,
    fixable=False,
    default=False,
)


def check(ctx: PythonContext) -> Iterator[Finding]:
    for node, message, everywhere in problems(ctx):
        if not everywhere:
            yield ctx.finding(node, message)
