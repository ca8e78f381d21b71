"""Theoretical occupancy of a kernel on one SM, from its registers, shared memory and warps.

This is the CUDA Occupancy Calculator's arithmetic (the one `cudaOccupancyMaxActiveBlocksPerMultiprocessor`
and Nsight Compute's `launch__occupancy_limit_*` follow): each resource gives a number of resident
blocks, the smallest wins and names the limiter.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from tritonify.diagnostics.compile.targets import Arch

LIMITERS = ("registers", "shared memory", "warps", "blocks")


@dataclass(frozen=True)
class Occupancy:
    blocks_per_sm: int
    warps_per_sm: int
    max_warps_per_sm: int
    limiter: str                       # one of LIMITERS: the resource that allowed the fewest blocks
    limits: dict                       # resource -> blocks it allows
    regs_per_thread_allocated: int     # after the 256-per-warp allocation unit
    smem_per_block_allocated: int      # bytes, with the driver's reserve and the 128-byte unit

    @property
    def fraction(self) -> float:
        return self.warps_per_sm / self.max_warps_per_sm if self.max_warps_per_sm else 0.0

    @property
    def percent(self) -> float:
        return round(100.0 * self.fraction, 2)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["percent"] = self.percent
        return d


def _round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


def blocks_by_registers(arch: Arch, regs_per_thread: int, warps_per_block: int) -> int:
    """Blocks the register file holds: warps are placed per sub-partition (4 per SM), each warp
    taking its registers rounded up to the 256-register allocation unit."""
    if regs_per_thread <= 0:
        return arch.max_blocks_per_sm
    if regs_per_thread > arch.max_regs_per_thread:
        return 0
    regs_per_warp = _round_up(regs_per_thread * 32, arch.reg_alloc_unit)
    if regs_per_warp * warps_per_block > arch.regs_per_sm:
        return 0
    per_partition = (arch.regs_per_sm // arch.sub_partitions) // regs_per_warp
    return (per_partition * arch.sub_partitions) // warps_per_block


def smem_per_block(arch: Arch, smem_bytes: int) -> int:
    """Shared memory one block occupies: its own bytes plus the driver's reserve, in 128-byte units."""
    return _round_up(smem_bytes + arch.reserved_smem_per_block, arch.smem_alloc_unit)


def blocks_by_shared_memory(arch: Arch, smem_bytes: int) -> int:
    if smem_bytes > arch.max_smem_per_block:
        return 0
    return arch.smem_per_sm // smem_per_block(arch, smem_bytes)


def theoretical_occupancy(arch: Arch, regs_per_thread: int, smem_bytes: int, num_warps: int) -> Occupancy:
    """Resident blocks and warps per SM for blocks of `num_warps` warps.

    `smem_bytes` is what the block asks for (Triton's dynamic shared memory plus the cubin's static
    shared memory); the 1 KB reserve is added here."""
    num_warps = max(1, int(num_warps))
    limits = {
        "registers": blocks_by_registers(arch, regs_per_thread, num_warps),
        "shared memory": blocks_by_shared_memory(arch, smem_bytes),
        "warps": arch.max_warps_per_sm // num_warps,
        "blocks": arch.max_blocks_per_sm,
    }
    # ties: the architectural limits (warps, blocks) first: a register or shared-memory limit that only
    # equals them costs nothing; between registers and shared memory, registers
    order = ("warps", "blocks", "registers", "shared memory")
    limiter = min(order, key=lambda k: (limits[k], order.index(k)))
    blocks = limits[limiter]
    return Occupancy(
        blocks_per_sm=blocks,
        warps_per_sm=blocks * num_warps,
        max_warps_per_sm=arch.max_warps_per_sm,
        limiter=limiter,
        limits=limits,
        regs_per_thread_allocated=_round_up(max(regs_per_thread, 1) * 32, arch.reg_alloc_unit) // 32,
        smem_per_block_allocated=smem_per_block(arch, smem_bytes),
    )
