"""TRI003 on the hand-labelled Liger file study (benchmarks/realworld/labels/liger_files.csv):
recall on standalone re-implementations must not fall back, files implementing no Liger op stay
at most 2% flagged, and Liger-Kernel's own package gets no TRI003/TRI023 finding. Needs the
real-world corpus (benchmarks/realworld/corpus.py); skipped where it is not built."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STUDY = ROOT / "benchmarks" / "realworld" / "liger_study.py"

# Issue 16's targets: recall >= 0.9 on standalone re-implementations, <= 2% of files that
# implement no Liger op flagged. Measured 2026-12-01: recall 57/61 = 0.93 (from 0.54), 0/169 flagged;
# after issue 26 (variants Liger does not ship are not positives; the provider scope off for recall):
# 39/42 = 0.93, 0/169 flagged, 0 findings in 102 labelled files of provider packages.
RECALL_FLOOR = 0.9
FALSE_FLAG_CEILING = 0.02


def _study():
    spec = importlib.util.spec_from_file_location("liger_study", STUDY)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("liger_study", module)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def measured():
    study = _study()
    corpus = study.default_corpus()
    if not (corpus / "flag-gems").is_dir():
        pytest.skip(f"real-world corpus not built at {corpus}")
    return study.measure(corpus)


def test_the_labels_cover_enough_files(measured):
    # 61 labelled positives, less the twenty-eight Liger does not serve (drop_in = no: interleaved RoPE, exact
    # GELU, q and k normed in one launch, fused prologues and epilogues, rounding kept on purpose, varlen rows;
    # since round 5's blind labels also rounding pinned by enable_fp_fusion=False / div_rn, rows to a count
    # loaded per MoE expert, a softmax over a loaded temperature: not a finding by the policy)
    assert measured.positives >= 30 and measured.negatives >= 150, (measured.positives, measured.negatives)


def test_recall_on_standalone_reimplementations(measured):
    assert measured.recall >= RECALL_FLOOR, (measured.recall, measured.missed, measured.wrong_op)


def test_files_implementing_no_liger_op_are_rarely_flagged(measured):
    assert measured.false_flag_rate <= FALSE_FLAG_CEILING, measured.false_flags


def test_no_finding_in_a_provider_package(measured):
    """Issue 26: a package whose kernels are its product (aten implementations, vendored copies)."""
    assert measured.provider_files > 0
    assert measured.provider_findings == []


def test_liger_kernels_own_package_gets_no_advice(measured):
    assert measured.liger_files > 0
    assert measured.liger_findings == []
