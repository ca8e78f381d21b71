"""Atomics contention: many atomic/reduction operations on few addresses serialise at L2.

Condition (ncu has no rule for it): atomic and reduction requests are >= 10 % of global memory
requests (`l1tex__t_requests_pipe_lsu_mem_global_op_{atom,red}.sum`) and warps stall on them
(long scoreboard + membar + lg_throttle + drain >= 40 % of CPI; a RED that returns nothing
shows up as drain stalls at EXIT, as on the H200). Triton's default `sem="acq_rel"` adds
fences, seen as membar stalls on the H200. Same names on sm_80 and sm_100. Line: the lines of
ATOM/RED instructions with the most samples.
"""
from tritonify.diagnostics.ncu.context import Context, Hit, Pattern
from tritonify.diagnostics.ncu.details_page import NcuRule

PATTERN = Pattern("G", "Atomics contention", (),
                  "reduce inside the program first (tl.sum) and issue one atomic per program, spread "
                  "hot addresses over several copies, or pass sem='relaxed' when no ordering is needed")

OPCODES = ("ATOM", "ATOMG", "RED", "REDG", "ATOMS", "REDUX")
METRICS = ("l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",
           "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
           "lts__t_sectors_op_atom.sum", "lts__t_sectors_op_red.sum",
           "smsp__average_warps_issue_stalled_membar_per_issue_active.ratio",
           "smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio",
           "smsp__average_warps_issue_stalled_drain_per_issue_active.ratio")
FALLBACKS = {
    # The plain L2 names need --metrics; the srcunit_tex ones come with --set full.
    "lts__t_sectors_op_atom.sum": ("lts__t_sectors_srcunit_tex_op_atom.sum",),
    "lts__t_sectors_op_red.sum": ("lts__t_sectors_srcunit_tex_op_red.sum",),
}
EXPLAINS = ("E",)


def detect(ctx: Context) -> Hit | None:
    atomic = ctx.total("l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum")
    total = atomic + ctx.total("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum")
    if not total or atomic / total < 0.1:
        return None
    stall = sum(ctx.stall_share(r) for r in ("long_scoreboard", "membar", "lg_throttle", "drain"))
    if stall < 0.4:
        return None
    lines = ctx.lines_by(lambda s: s.samples if s.count(OPCODES) else 0)
    evidence = {"atomic_share_of_global_requests": atomic / total, "atomic_stall_share_of_cpi": stall,
                "lts__t_sectors_op_atom.sum": ctx.opt("lts__t_sectors_op_atom.sum"),
                "lts__t_sectors_op_red.sum": ctx.opt("lts__t_sectors_op_red.sum")}
    return Hit(PATTERN, min(1.0, stall), {k: v for k, v in evidence.items() if v is not None},
               f"{atomic / total:.0%} of global requests are atomics and {stall:.0%} of each instruction's "
               "cycles wait on memory or fences", lines)


def matches_rule(rule: NcuRule) -> bool:
    d = rule.description.lower()
    return rule.name == "CPIStall" and "scoreboard dependency on a l1tex" not in d \
        and ("membar" in d or "memory barrier" in d)
