"""Parsing the tools' text: cuobjdump -res-usage, the ptxas -v log, PTX and SASS listings."""
from tritonify.diagnostics.compile.asm import parse_ptx, parse_sass
from tritonify.diagnostics.compile.resources import (
    parse_ptxas_log,
    parse_res_usage,
    resources_from,
)

RES = """
Resource usage:
 Common:
  GLOBAL:0
 Function planted_k_spill:
  REG:64 STACK:3560 SHARED:0 LOCAL:0 CONSTANT[0]:568 TEXTURE:0 SURFACE:0 SAMPLER:0
"""
LOG = """ptxas-blackwell info    : 0 bytes gmem
ptxas-blackwell info    : Compiling entry function 'planted_k_spill' for 'sm_90a'
ptxas-blackwell info    : Function properties for planted_k_spill
    3560 bytes stack frame, 8268 bytes spill stores, 11352 bytes spill loads
ptxas-blackwell info    : Used 64 registers, used 0 barriers, 3560 bytes cumulative stack size
"""


def test_res_usage_and_log():
    assert parse_res_usage(RES, "planted_k_spill") == {"REG": 64, "STACK": 3560, "SHARED": 0, "LOCAL": 0,
                                                       "CONSTANT[0]": 568, "TEXTURE": 0, "SURFACE": 0, "SAMPLER": 0}
    assert parse_res_usage(RES, "other") == {}
    assert parse_ptxas_log(LOG) == {"stack": 3560, "spill_stores": 8268, "spill_loads": 11352,
                                    "registers": 64, "barriers": 0}
    r = resources_from({"name": "planted_k_spill", "res_usage": RES, "ptxas_log": LOG, "shared": 32})
    assert r.registers == 64 and r.spills and r.shared == 32


def test_no_tool_output_gives_no_resources():
    assert resources_from({"name": "k", "res_usage": "", "ptxas_log": ""}) is None


PTX = """\t.file\t1 "/tmp/x/k.py"
.visible .entry k(
)
{
\t.loc\t1 10 0
\tmov.u32 \t%r1, 0;
$L__BB0_1:
\t.loc\t1 12 5
\tadd.s32 \t%r1, %r1, 1;
\t.loc\t1 13 5
\tsetp.lt.s32 \t%p1, %r1, 8;
\t@%p1 bra \t$L__BB0_1;
\t.loc\t1 14 5
\tret;
}
"""

SASS = """\t//## File "/tmp/x/k.py", line 10
        /*0000*/                   MOV R1, RZ ;
.L_x_0:
\t//## File "/tmp/x/k.py", line 12
        /*0010*/                   IADD3 R1, R1, 0x1, RZ ;
        /*0020*/                   ISETP.GE.AND P0, PT, R1, 0x8, PT ;
        /*0030*/              @!P0 BRA `(.L_x_0) ;
        /*0040*/                   EXIT ;
.L_x_1:
        /*0050*/                   BRA `(.L_x_1);
"""


def test_ptx_lines_and_loop():
    listing = parse_ptx(PTX, "/tmp/x/k.py")
    assert listing.instructions == 5
    loop = listing.main_loop
    assert loop.instructions == 3 and loop.source_lines == (12, 13)
    assert listing.by_source_line()[12] == [9]


def test_sass_loop_ignores_the_trailing_self_branch():
    listing = parse_sass(SASS, "/tmp/x/k.py")
    assert len(listing.loops) == 1
    assert listing.main_loop.instructions == 3 and listing.main_loop.source_lines == (12, 12)


def test_ptx_instruction_with_vector_operands_counts():
    ptx = '\t.loc\t1 5 0\n\twgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%r1,%r2}, %rd1, %rd2, %p1, 1, 1, 0, 1;\n{\n}\n'
    listing = parse_ptx(ptx)
    assert listing.instructions == 1 and listing.by_source_line() == {5: [2]}
