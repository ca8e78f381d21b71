"""`tritonify bench` with a Python that has no torch: one clear sentence, and no lineage record
(nothing was learned about the kernel)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_python_without_torch_is_named_and_the_run_is_not_recorded(tmp_path):
    for name in ("rmsnorm.py", "rmsnorm_contract.py"):
        shutil.copy(ROOT / "examples" / "bench" / name, tmp_path / name)
    no_torch = tmp_path / "python-without-torch"
    no_torch.write_text(f"#!{sys.executable}\n"
                        "import runpy, sys\n"
                        "sys.modules['torch'] = None          # `import torch` fails as if it were not installed\n"
                        "module, sys.argv = sys.argv[2], [sys.argv[2], *sys.argv[3:]]\n"
                        "runpy.run_module(module, run_name='__main__', alter_sys=True)\n")
    no_torch.chmod(0o755)
    proc = subprocess.run([sys.executable, "-m", "tritonify", "bench", f"{tmp_path / 'rmsnorm.py'}::rmsnorm_kernel",
                           "--python", str(no_torch), "--format", "json", "--no-report"],
                          capture_output=True, text=True, timeout=120, check=False)
    result = json.loads(proc.stdout)
    assert proc.returncode == 1 and result["status"] == "error" and result["environment"] is True
    assert result["message"].startswith("torch is not installed in ") and "--python" not in result["message"]
    assert "bench --python" in result["hint"] and "tritonify.interpreter" in result["hint"]   # the fix by hand, apart
    assert "Traceback" not in proc.stderr
    assert result["lineage"]["skipped"].startswith("not recorded")
    assert not (tmp_path / "candidates.jsonl").exists()
