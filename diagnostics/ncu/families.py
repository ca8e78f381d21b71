"""Kernel families whose fix for a pattern is specific: the profiled kernel's name says which family
it is, and the family's fix replaces the pattern's generic one-line fix.

Convolutions (a name with ``conv``, ``fprop``/``dgrad``/``wgrad``, ``implicit_gemm`` or
``implicit_convolve``: Triton kernels such as ``conv2d_forward_kernel``, cuDNN's
``sm90_xmma_fprop_implicit_gemm_...``, ``implicit_convolve_sgemm``):
* C (uncoalesced): an NCHW walk, where adjacent lanes read one channel of neighbouring pixels
  H*W elements apart, or one pixel across channels; the fix is the NHWC layout (channels
  contiguous), loaded as a [pixels, channels] tile;
* A (small grid) and N (divergence): a small C_in (an RGB stem's 3 channels) leaves the K tile's
  channel lanes idle or the grid short of programs; the fix is to pad the channels (to 8 or 16, the
  16-byte TMA alignment) or to walk the flat (r, s, c) index in the K loop.
"""
from __future__ import annotations

import re

CONVOLUTION = re.compile(r"conv|fprop|dgrad|wgrad|implicit_gemm|implicit_convolve", re.I)

_FIXES = {
    ("convolution", "C"): "a convolution reading NCHW data: use NHWC (channels contiguous: `x.permute(0, 2, 3, 1)` "
                          "once, or channels_last), so each tap loads a [pixels, channels] tile with lanes along the "
                          "channels; `tritonify template conv2d` is an NHWC implicit GEMM",
    ("convolution", "A"): "a convolution with few programs: split K (the R*S*C_in reduction) over more programs or "
                          "use smaller output tiles; with a small C_in (3 for RGB) pad the channels to 8 or 16 or walk "
                          "the flat (r, s, c) index in the K loop",
    ("convolution", "N"): "a convolution whose channel lanes sit idle: with a small C_in (3 for RGB) pad the channels "
                          "to 8 or 16 (the 16-byte TMA alignment) or walk the flat (r, s, c) index in the K loop, so "
                          "a K tile is not mostly masked-off channels",
}


def family_of(kernel_name: str | None) -> str | None:
    """"convolution" when the kernel's name says so, else None."""
    return "convolution" if kernel_name and CONVOLUTION.search(kernel_name) else None


def family_fix(letter: str, kernel_name: str | None) -> str | None:
    """The family's fix for pattern ``letter`` on this kernel, or None (the pattern's own fix applies)."""
    family = family_of(kernel_name)
    return _FIXES.get((family, letter.upper())) if family else None
