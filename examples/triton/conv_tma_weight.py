"""A 3x3 convolution weight read through a TMA descriptor, prepared on the host (Tritonify example).

`tritonify check examples/triton/conv_tma_weight.py` reports the descriptor (TRI041): 36 bf16
channels make 72-byte rows, and a tensor descriptor's strides must be multiples of 16 bytes.
"""
import torch
from triton.tools.tensor_descriptor import TensorDescriptor

C_OUT, R, S, C_IN = 256, 3, 3, 36


def weight_descriptor():
    weight = torch.randn(C_OUT, R * S, C_IN, dtype=torch.bfloat16, device="cuda") / (R * S * C_IN) ** 0.5
    return weight, TensorDescriptor.from_tensor(weight, [128, 1, 32])


def padded_weight_descriptor():
    padded = torch.zeros(C_OUT, R * S, 40, dtype=torch.bfloat16, device="cuda")  # 36 channels padded to 40
    padded[:, :, :C_IN] = torch.randn(C_OUT, R * S, C_IN, dtype=torch.bfloat16, device="cuda")
    return padded, TensorDescriptor.from_tensor(padded, [128, 1, 32])
