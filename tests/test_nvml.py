"""The one NVML reader (`infra.nvml.device_state`): the GPU CUDA runs on, also in a process pinned with
CUDA_VISIBLE_DEVICES, and the same fields in the profiler's and the benchmark's records."""
import pytest

from tritonify.infra.nvml import NvmlUnavailable, device_state, visible_handle


class FakeHandles:
    def nvmlDeviceGetHandleByIndex(self, i):
        return ("index", i)

    def nvmlDeviceGetHandleByUUID(self, u):
        return ("uuid", u)


class FakeNvml(FakeHandles):
    """An H200 whose power cap is throttling it; the bindings return bytes, as older ones do."""
    NVML_CLOCK_SM, NVML_CLOCK_MEM, NVML_TEMPERATURE_GPU = 1, 2, 0
    started = 0

    def nvmlInit(self):
        FakeNvml.started += 1

    def nvmlShutdown(self):
        FakeNvml.started -= 1

    def nvmlDeviceGetName(self, h):
        return b"NVIDIA H200"

    def nvmlDeviceGetUUID(self, h):
        return f"GPU-{h[1]}"

    def nvmlSystemGetDriverVersion(self):
        return b"580.159.04"

    def nvmlDeviceGetClockInfo(self, h, kind):
        return {1: 1755, 2: 3201}[kind]

    def nvmlDeviceGetMaxClockInfo(self, h, kind):
        return 1980

    def nvmlDeviceGetMemoryInfo(self, h):
        return type("Memory", (), {"total": 150_754_820_096})()

    def nvmlDeviceGetTemperature(self, h, sensor):
        return 51

    def nvmlDeviceGetPowerUsage(self, h):
        return 400_500

    def nvmlDeviceGetCurrentClocksEventReasons(self, h):
        return 0x4


def test_pinned_index_maps_to_the_physical_gpu(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,1")
    assert visible_handle(FakeHandles(), 0) == ("index", 3)
    assert visible_handle(FakeHandles(), 1) == ("index", 1)


def test_pinned_uuid_is_looked_up_by_uuid(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-abc")
    assert visible_handle(FakeHandles(), 0) == ("uuid", "GPU-abc")


def test_unpinned_process_uses_the_index(monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert visible_handle(FakeHandles(), 2) == ("index", 2)


def test_device_state_reads_the_pinned_gpu_as_text_and_shuts_nvml_down(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "5")
    state = device_state(0, module=FakeNvml())
    assert state == {"name": "NVIDIA H200", "uuid": "GPU-5", "driver": "580.159.04", "sm_clock_mhz": 1755,
                     "max_sm_clock_mhz": 1980, "mem_clock_mhz": 3201, "memory_total_mib": 143_771,
                     "temperature_c": 51, "power_w": 400.5, "clock_event_reasons": 0x4}
    assert FakeNvml.started == 0


def test_a_field_the_gpu_does_not_answer_is_none():
    class NoPower(FakeNvml):
        def nvmlDeviceGetPowerUsage(self, h):
            raise RuntimeError("NVMLError_NotSupported")

    del_reasons = type("NoReasons", (NoPower,), {"nvmlDeviceGetCurrentClocksEventReasons": None})
    state = device_state(0, module=del_reasons())
    assert state["power_w"] is None and state["clock_event_reasons"] is None and state["name"] == "NVIDIA H200"


def test_profiler_and_benchmark_record_the_same_state(monkeypatch):
    import tritonify.infra.nvml as nvml
    from tritonify.kernels.bench import environment
    from tritonify.tools.ncu import gpu_info

    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    real = nvml.device_state
    monkeypatch.setattr(nvml, "device_state", lambda index=0, module=None: real(index, FakeNvml()))
    monkeypatch.setattr(gpu_info, "device_state", nvml.device_state)
    profiled = gpu_info.gpu_info()
    benched = environment._nvml(0)
    assert profiled["available"] is True
    assert profiled["warnings"] == ["clocks throttled: software power cap"]
    assert {k: profiled[k] for k in benched} == benched


def test_no_nvml_is_said_not_raised(monkeypatch):
    from tritonify.kernels.bench import environment
    from tritonify.tools.ncu import gpu_info

    def unavailable(index=0, module=None):
        raise NvmlUnavailable("nvidia-ml-py is not installed")

    monkeypatch.setattr(gpu_info, "device_state", unavailable)
    assert gpu_info.gpu_info() == {"available": False, "reason": "nvidia-ml-py is not installed"}
    monkeypatch.setattr("tritonify.infra.nvml.device_state", unavailable)
    assert environment._nvml(0) == {"nvml": "nvidia-ml-py is not installed"}


@pytest.mark.gpu
def test_a_real_gpu_is_read_the_same_by_the_profiler_and_the_benchmark():
    torch = pytest.importorskip("torch")
    pytest.importorskip("pynvml")
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    from tritonify.kernels.bench import environment
    from tritonify.tools.ncu import gpu_info

    profiled = gpu_info.gpu_info()
    benched = environment.gpu_info()
    assert profiled["available"] is True, profiled
    assert profiled["name"] == torch.cuda.get_device_name(0) == benched["name"]
    for field in ("uuid", "driver", "sm_clock_mhz", "max_sm_clock_mhz", "mem_clock_mhz", "memory_total_mib"):
        assert profiled[field] is not None and benched[field] is not None, field
    assert profiled["uuid"] == benched["uuid"] and profiled["driver"] == benched["driver"]
    assert 0 < profiled["sm_clock_mhz"] <= profiled["max_sm_clock_mhz"]
    assert isinstance(profiled["warnings"], list)
