"""GPU discovery and choice: simulated NVML and device records (no GPU needed)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest
from tritonify.kernels.sweep import devices
from tritonify.kernels.sweep.devices import Device, SelectionError


class FakeNvml:
    """The pynvml calls ``discover`` makes, over a list of (name, utilization %, compute processes)."""

    def __init__(self, gpus, fail_init=None):
        self.gpus, self.fail_init, self.shut = gpus, fail_init, False

    def nvmlInit(self):
        if self.fail_init:
            raise self.fail_init

    def nvmlShutdown(self):
        self.shut = True

    def nvmlDeviceGetCount(self):
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, i):
        return i

    def nvmlDeviceGetName(self, h):
        return self.gpus[h][0].encode()

    def nvmlDeviceGetUUID(self, h):
        return f"GPU-{h:04d}"

    def nvmlDeviceGetUtilizationRates(self, h):
        return SimpleNamespace(gpu=self.gpus[h][1])

    def nvmlDeviceGetMemoryInfo(self, h):
        return SimpleNamespace(used=3 * 2**20)

    def nvmlDeviceGetComputeRunningProcesses(self, h):
        return [object()] * self.gpus[h][2]


def test_discover_reads_names_and_marks_busy_gpus():
    nvml = FakeNvml([("NVIDIA H200", 0, 0), ("NVIDIA H200", 95, 0), ("NVIDIA H200", 0, 2)])
    found, reason = devices.discover(nvml)
    assert reason is None and nvml.shut
    assert [d.name for d in found] == ["NVIDIA H200"] * 3 and found[0].uuid == "GPU-0000"
    assert found[0].busy is None
    assert "95% utilised" in found[1].busy and "2 compute process" in found[2].busy


def test_discover_without_a_driver_gives_a_reason_not_an_exception():
    found, reason = devices.discover(FakeNvml([], fail_init=RuntimeError("NVML Shared Library Not Found")))
    assert found == [] and "NVML is unavailable" in reason
    with pytest.raises(SelectionError, match="no GPU found: NVML is unavailable"):
        devices.select(found, "all", reason=reason)


def test_discover_without_nvidia_ml_py(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "pynvml", None)     # import pynvml now raises ImportError
    found, reason = devices.discover()
    assert found == [] and "nvidia-ml-py is not installed" in reason


def test_parse_gpus():
    assert devices.parse_gpus("all") == "all"
    assert devices.parse_gpus("0, 1") == [0, 1]
    assert devices.parse_gpus("cpu:2") == 2
    for bad, needle in (("0,x", "bad GPU 'x'"), ("1,1", "listed twice"), ("cpu:0", "bad CPU slot"), ("", "bad GPU")):
        with pytest.raises(ValueError, match=needle):
            devices.parse_gpus(bad)


def _dev(i, name="NVIDIA H200", busy=None):
    return Device(index=i, name=name, uuid=f"GPU-{i}", host="node-a", busy=busy)


def test_busy_gpus_are_skipped_with_a_note_unless_allowed():
    found = [_dev(0), _dev(1, busy="95% utilised"), _dev(2)]
    chosen, notes = devices.select(found, "all")
    assert [d.index for d in chosen] == [0, 2]
    assert notes == ["GPU 1 (NVIDIA H200) skipped: busy, 95% utilised"]
    chosen, notes = devices.select(found, "all", allow_busy=True)
    assert [d.index for d in chosen] == [0, 1, 2] and notes == []
    with pytest.raises(SelectionError, match="every GPU asked for is busy"):
        devices.select(found, [1])


def test_mixing_gpu_models_is_refused_unless_asked():
    found = [_dev(0), _dev(1, name="NVIDIA H100 80GB HBM3"), _dev(2)]
    with pytest.raises(SelectionError, match="2 models .*1: NVIDIA H100"):
        devices.select(found, "all")
    assert [d.index for d in devices.select(found, [0, 2])[0]] == [0, 2]      # one model: fine
    assert len(devices.select(found, "all", allow_mixed=True)[0]) == 3
    with pytest.raises(SelectionError, match="no GPU 7"):
        devices.select(found, [0, 7])


def test_slots_pin_each_job_to_one_gpu_and_say_where_it_ran():
    slots = devices.gpu_slots([_dev(0), _dev(3)])
    assert [s.env for s in slots] == [{"CUDA_VISIBLE_DEVICES": "GPU-0"}, {"CUDA_VISIBLE_DEVICES": "GPU-3"}]
    place = slots[1].placement()
    assert place == {"slot": "gpu3", "host": "node-a", "gpu_model": "NVIDIA H200", "gpu_uuid": "GPU-3",
                     "gpu_index": 3, "cuda_visible_devices": "GPU-3"}
    cpu = devices.cpu_slots(2)
    assert [s.env["CUDA_VISIBLE_DEVICES"] for s in cpu] == ["0", "1"] and cpu[0].model is None
    with pytest.raises(SelectionError):
        devices.cpu_slots(0)
