from tritonify.diagnostics.model import Severity

from tests.lintutil import lint, lint_fixture, marked_lines


def test_fixture_flags_exactly_the_marked_lines():
    findings = lint_fixture("TRI018.py", "TRI018")
    assert [f.line for f in findings] == marked_lines("TRI018.py", "TRI018")
    assert all(f.severity is Severity.WARNING and not f.fixes for f in findings)


def test_message_names_the_poll_and_the_alternative():
    by_line = {f.line: f.message for f in lint_fixture("TRI018.py", "TRI018")}
    cas, poll, volatile, xchg = marked_lines("TRI018.py", "TRI018")
    assert "atomic_cas" in by_line[cas]
    assert "atomic_add(ptr, 0)" in by_line[poll]
    assert "volatile load" in by_line[volatile]
    assert "atomic_xchg" in by_line[xchg]
    assert all("two-stage reduction" in m and "resident" in m for m in by_line.values())


def test_finding_covers_the_loop_test_only():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(lock):
        while tl.atomic_cas(lock, 0, 1) != 0:
            pass
    """
    (f,) = lint(code, "TRI018")
    assert (f.line, f.end_line) == (7, 7)
    assert f.column == len("    while ")


def test_polling_an_atomic_that_makes_progress_itself_is_not_a_spin():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(counter, n):
        i = tl.atomic_add(counter, 1)
        while i < n:
            i = tl.atomic_add(counter, 1)
        while tl.atomic_add(counter, 2) < n:
            pass
    """
    assert lint(code, "TRI018") == []


def test_non_volatile_load_loop_is_quiet():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(p, n):
        i = 0
        while i < n:
            i = tl.load(p + i)
    """
    assert lint(code, "TRI018") == []


def test_the_rule_is_opt_in():
    from tritonify.diagnostics.registry import all_rules

    (rule,) = [r.rule for r in all_rules() if r.rule.code == "TRI018"]
    assert rule.default is False


def test_only_waits_that_can_deadlock_are_reported():
    # round 3 of the real-world study (benchmarks/realworld/labels/round3_*.csv): decoupled
    # look-back, a mutex the kernel releases, a bounded poll, a flag written by another kernel and
    # a barrier on a persistent (SM-count) grid cannot hang; a barrier on a grid that grows with the
    # data and a wait on higher program ids can
    findings = lint_fixture("TRI018_safe.py", "TRI018")
    assert [f.line for f in findings] == marked_lines("TRI018_safe.py", "TRI018")


def test_a_lock_taken_and_never_released_is_reported():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(lock, out):
        while tl.atomic_cas(lock, 0, 1) == 1:
            pass
        tl.store(out, 1)
    """
    assert len(lint(code, "TRI018")) == 1
    released = code.replace("tl.store(out, 1)", "tl.store(out, 1)\n        tl.atomic_xchg(lock, 0)")
    assert lint(released, "TRI018") == []
