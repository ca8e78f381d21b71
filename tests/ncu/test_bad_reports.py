"""Damaged reports given to `tritonify diagnose`: one clear error naming the file, exit code 2,
nothing printed on stdout (no numbers made from half a row), bounded memory."""
import gzip
import tracemalloc

import pytest


from .helpers import FIXTURES, text


def _run(capsys, *argv):
    from tritonify.cli.main import main as cli

    code = cli(["diagnose", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def _raw() -> str:
    return text("raw_base.csv")


def test_truncated_raw_page(tmp_path, capsys):
    raw = _raw()
    cut = raw[: raw.rindex("\n", 0, len(raw) // 2) + 200]  # stops inside a launch's row
    path = tmp_path / "raw_truncated.csv"
    path.write_text(cut)
    code, out, err = _run(capsys, path)
    assert code == 2 and out == ""
    assert str(path) in err and "truncated or damaged" in err


def test_unterminated_quote(tmp_path, capsys):
    lines = _raw().splitlines(keepends=True)
    lines[3] = lines[3].replace('"control_', '"control_\\', 1).replace('",', ',', 1)  # a quote left open
    path = tmp_path / "raw_quote.csv"
    path.write_text("".join(lines))
    code, out, err = _run(capsys, path)
    assert code == 2 and out == "" and str(path) in err


def test_cell_over_the_csv_limit(tmp_path, capsys):
    lines = _raw().splitlines(keepends=True)
    lines[2] = lines[2].replace('"control_copy"', '"' + "x" * 200_000 + '"', 1)
    path = tmp_path / "raw_big_cell.csv"
    path.write_text("".join(lines))
    code, out, err = _run(capsys, path)
    assert code == 2 and out == ""
    assert str(path) in err and "not valid CSV" in err and "field larger than field limit" in err


def test_gzip_that_inflates_without_bound(tmp_path, capsys, monkeypatch):
    from tritonify.tools.ncu import inputs

    monkeypatch.setattr(inputs, "MAX_BYTES", 1 << 20)  # 1 MiB, so the test stays small
    path = tmp_path / "bomb.csv.gz"
    with gzip.open(path, "wb", compresslevel=9) as g:
        chunk = b"0" * (1 << 20)
        for _ in range(32):  # 32 MiB of text from a ~32 KiB file
            g.write(chunk)
    assert path.stat().st_size < 200_000
    tracemalloc.start()
    code, out, err = _run(capsys, path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert code == 2 and out == "" and str(path) in err and "inflates to more than" in err
    assert peak < 8 * (1 << 20)  # never the 32 MiB


def test_truncated_gzip(tmp_path, capsys):
    data = (FIXTURES / "raw_base.csv.gz").read_bytes()
    path = tmp_path / "raw_cut.csv.gz"
    path.write_bytes(data[: len(data) // 2])
    code, out, err = _run(capsys, path)
    assert code == 2 and out == "" and str(path) in err and "damaged or truncated" in err


def test_truncated_details_and_source_pages_name_their_file(tmp_path, capsys):
    det = text("details.csv")
    cut = det[: det.rindex("\n", 0, len(det) // 2) + 40]
    raw_path, det_path = tmp_path / "raw.csv", tmp_path / "details_cut.csv"
    raw_path.write_text(_raw())
    det_path.write_text(cut)
    code, out, err = _run(capsys, raw_path, "--details", det_path)
    assert code == 2 and out == "" and str(det_path) in err
    src = text("source/planted_c_uncoalesced.csv")
    src_path = tmp_path / "source_cut.csv"
    src_path.write_text(src[: src.rindex("\n", 0, len(src) // 2) + 30])
    code, out, err = _run(capsys, raw_path, "--source", src_path)
    assert code == 2 and out == "" and str(src_path) in err and "truncated" in err


@pytest.mark.parametrize("name", ["raw_base.csv", "raw.csv", "raw_lean.csv"])
def test_intact_exports_still_read(tmp_path, capsys, name):
    path = tmp_path / name
    path.write_text(text(name))
    code, out, err = _run(capsys, path)
    assert code in (0, 1) and out and "error" not in err
