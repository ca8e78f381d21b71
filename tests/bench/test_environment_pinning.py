"""NVML must describe the GPU torch runs on, also in a process pinned with CUDA_VISIBLE_DEVICES."""
from tritonify.kernels.bench.environment import _nvml_handle


class FakeNvml:
    def nvmlDeviceGetHandleByIndex(self, i):
        return ("index", i)

    def nvmlDeviceGetHandleByUUID(self, u):
        return ("uuid", u)


def test_pinned_index_maps_to_the_physical_gpu(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,1")
    assert _nvml_handle(FakeNvml(), 0) == ("index", 3)
    assert _nvml_handle(FakeNvml(), 1) == ("index", 1)


def test_pinned_uuid_is_looked_up_by_uuid(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-abc")
    assert _nvml_handle(FakeNvml(), 0) == ("uuid", "GPU-abc")


def test_unpinned_process_uses_the_index(monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert _nvml_handle(FakeNvml(), 2) == ("index", 2)
