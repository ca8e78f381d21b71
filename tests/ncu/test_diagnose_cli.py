"""`tritonify diagnose` on the H200 exports, and its error messages."""
import json

from tritonify.cli.main import main

from .helpers import FIXTURES, text


def write(tmp_path, name, body):
    p = tmp_path / name
    p.write_text(body)
    return str(p)


def test_json_from_csv_pages(tmp_path, capsys):
    code = main(["diagnose", str(FIXTURES / "raw_base.csv.gz"), "--details", str(FIXTURES / "details.csv.gz"),
                 "--source", str(FIXTURES / "source" / "planted_c_uncoalesced.csv.gz"),
                 "--root", str(FIXTURES), "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1 and len(data) == 28
    c = next(d for d in data if d["kernel"] == "planted_c_uncoalesced")
    assert c["patterns"][0]["pattern"] == "C" and c["patterns"][0]["evidence"]
    assert c["lines"][0]["line"] in (107, 108)
    assert [f["line"] for f in c["findings"] if f["code"] == "C"] == [107]
    assert c["findings"][0]["path"].endswith("planted_triton.py")
    assert c["ncu_rules"] and "UncoalescedGlobalAccess" in {r["rule"] for r in c["ncu_rules"]}
    clean = next(d for d in data if d["kernel"] == "control_copy")
    assert clean["patterns"] == [] and clean["findings"] == []


def test_text_output_without_details(capsys):
    code = main(["diagnose", str(FIXTURES / "raw.csv.gz")])
    out = capsys.readouterr().out
    assert code == 1
    assert "planted_k_spill" in out and "K  warning  Local memory (register spill or local array)" in out
    assert "control_copy" in out and "no bottleneck pattern found" in out


def test_second_capture_gives_the_same_verdicts():
    """An independent capture on the H200 (lean sections) names the same patterns."""
    from tritonify.diagnostics.ncu.diagnose import diagnose_pages

    from .helpers import manifest

    expected = {m["kernel"]: set(m["plants"]) for m in manifest()}
    for d in diagnose_pages(text("raw_lean.csv")):
        if "control" in d.launch.kernel:
            assert d.letters == [], d.launch.kernel
        else:
            assert expected[d.launch.kernel] <= set(d.letters), d.launch.kernel


def test_errors_are_clear(tmp_path, capsys, monkeypatch):
    assert main(["diagnose", str(tmp_path / "missing.csv")]) == 2
    assert "no such file" in capsys.readouterr().err
    details = write(tmp_path, "d.csv", text("details.csv"))
    assert main(["diagnose", details]) == 2
    assert "details page" in capsys.readouterr().err
    assert main(["diagnose", write(tmp_path, "x.csv", "a,b\n1,2\n")]) == 2
    assert "not an ncu CSV page" in capsys.readouterr().err
    assert main(["diagnose", str(FIXTURES / "raw.csv.gz"), "--source", details]) == 2
    assert "should be a source page but is a details page" in capsys.readouterr().err
    rep = tmp_path / "r.ncu-rep"
    rep.write_bytes(b"\0")
    monkeypatch.setenv("TRITONIFY_NCU", str(tmp_path / "no-ncu"))
    assert main(["diagnose", str(rep)]) == 2
    err = capsys.readouterr().err
    assert "needs `ncu`" in err and "--page raw" in err


def test_ncu_rep_is_exported_with_ncu(tmp_path, capsys, monkeypatch):
    from pathlib import Path

    monkeypatch.setenv("TRITONIFY_NCU", str(Path(__file__).parent / "fake_ncu.py"))
    monkeypatch.setenv("FAKE_NCU_KERNEL", "planted_l_fp64")
    rep = tmp_path / "r.ncu-rep"
    rep.write_bytes(b"fake")
    assert main(["diagnose", str(rep), "--format", "json", "--root", str(FIXTURES)]) == 1
    (launch,) = json.loads(capsys.readouterr().out)
    assert launch["kernel"] == "planted_l_fp64" and launch["patterns"][0]["pattern"] == "L"
    assert any(f["code"] == "L" and f["fixes"] for f in launch["findings"])
