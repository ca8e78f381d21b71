"""Code lenses above each `@triton.jit` kernel: "Benchmark | Profile", then the last result
of each (for example "bench: 0.41 ms, 3.1 TB/s, 1.8x eager") once a job has reported one; and,
once the kernel has been compiled (inspect_feature), its registers, spills, shared memory and
occupancy above each autotune config."""
from __future__ import annotations

from lsprotocol import types

from tritonify.server.app import TritonifyServer, guarded
from tritonify.server.documents import open_document
from tritonify.server.inspect_feature import InspectFeature
from tritonify.server.jobs_feature import JobsFeature


async def code_lenses(server: TritonifyServer, params: types.CodeLensParams) -> list[types.CodeLens]:
    analysis = await server.current_analysis(params.text_document.uri)
    if analysis is None:
        # a version still being typed (or linted): the last analysis' lenses, so that they do
        # not vanish and come back with each key (the code would jump a line and back)
        doc = open_document(server, params.text_document.uri)
        analysis = server.analyses.latest(doc.uri) if doc is not None else None
    if analysis is None:
        if doc is not None:
            server.owe_code_lenses(doc.uri)   # asked again once a lint of it has ended
        return []
    jobs = server.get_feature(JobsFeature)
    results = jobs.job_results if jobs is not None else {}
    lenses = []
    for kernel in analysis.kernels:
        pos = analysis.index.position(kernel.first_line, 0)
        rng = types.Range(start=pos, end=pos)
        args = [analysis.uri, kernel.name]
        lenses.append(types.CodeLens(range=rng, command=types.Command(title="Benchmark", command="tritonify.benchmark", arguments=args)))
        lenses.append(types.CodeLens(range=rng, command=types.Command(title="Profile", command="tritonify.profile", arguments=args)))
        for kind, label in (("benchmark", "bench"), ("profile", "profile")):
            summary = results.get((analysis.uri, kernel.name), {}).get(kind)
            if summary:
                lenses.append(types.CodeLens(range=rng, command=types.Command(
                    title=f"{label}: {summary}", command="tritonify.showResult", arguments=[analysis.uri, kernel.name, kind])))
    inspect_feature = server.get_feature(InspectFeature)
    if inspect_feature is not None:
        lenses += inspect_feature.code_lenses(analysis.uri, analysis.index, analysis.kernels)
    return lenses


def register(server: TritonifyServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))
    @guarded(server, "codeLens", default=list)
    async def on_code_lens(params: types.CodeLensParams):
        return await code_lenses(server, params)
