"""Reaching definitions (`_reaching.py`): the binding that reaches a use, not the first one."""
import ast
import textwrap

from tritonify.diagnostics.rules.triton._reaching import ReachingDefinitions


def _uses(code: str, name: str):
    """(line, reach) for every read of `name` in the first function of `code`."""
    func = ast.parse(textwrap.dedent(code)).body[0]
    rd = ReachingDefinitions(func)
    out = []
    for node in ast.walk(func):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
            out.append((node.lineno, rd.at(node)))
    return sorted(out, key=lambda t: t[0]), rd, func


def _lines(reach):
    return [b.stmt.lineno for b in reach.bindings]


def test_a_rebinding_on_the_line_before_is_what_reaches():
    uses, _, _ = _uses("""
    def k(p, q, BT, BK):
        b = tl.load(p)
        b = tl.reshape(b, (BT * BK,))
        tl.store(q, b)
    """, "b")
    # the reshape reads the load (line 3); the store reads the reshape (line 4)
    assert [(line, _lines(r), r.entry) for line, r in uses] == [(4, [3], False), (5, [4], False)]


def test_both_branches_of_an_if_reach_the_use_after_it():
    uses, _, _ = _uses("""
    def k(p, offs, USE_VEC):
        x = 0.0
        if USE_VEC:
            x = tl.load(p + offs)
        tl.store(p, x)
    """, "x")
    (line, reach), = uses
    assert line == 6 and _lines(reach) == [3, 5] and reach.single() is None


def test_an_else_that_rebinds_hides_the_first_binding():
    uses, _, _ = _uses("""
    def k(p, offs, C):
        x = 0.0
        if C:
            x = tl.load(p + offs)
        else:
            x = tl.zeros((16,), dtype=tl.float32)
        return x
    """, "x")
    (line, reach), = uses
    assert _lines(reach) == [5, 7]


def test_a_loop_carried_value_reaches_its_own_update_and_the_use_after_the_loop():
    uses, _, _ = _uses("""
    def k(p, n, BLOCK):
        acc = tl.zeros((BLOCK,), dtype=tl.float32)
        for i in range(0, n, BLOCK):
            acc = acc * 0.5 + tl.load(p + i)
        tl.store(p, acc)
    """, "acc")
    (l1, in_loop), (l2, after) = uses
    assert (l1, _lines(in_loop)) == (5, [3, 5])
    assert (l2, _lines(after)) == (6, [3, 5])  # zero iterations leave the zeros


def test_a_branch_that_returns_does_not_reach_past_the_if():
    uses, _, _ = _uses("""
    def k(p, pid, n):
        row = pid
        if pid >= n:
            row = 0
            return
        tl.store(p + row, 1.0)
    """, "row")
    (line, reach), = uses
    assert _lines(reach) == [3]


def test_a_parameter_rebound_on_one_path_reaches_with_its_entry_value():
    uses, _, _ = _uses("""
    def k(x_ptr, stride, WIDE):
        if WIDE:
            stride = stride.to(tl.int64)
        tl.load(x_ptr + stride)
    """, "stride")
    in_cast, at_load = uses
    assert in_cast[1].entry and not in_cast[1].bindings
    assert at_load[1].entry and _lines(at_load[1]) == [4]


def test_augmented_assignment_reads_the_previous_binding():
    code = """
    def k(p, BLOCK):
        acc = tl.zeros((BLOCK,), dtype=tl.float32)
        acc += tl.load(p)
        acc = tl.sum(acc, axis=0)
        tl.store(p, acc)
    """
    func = ast.parse(textwrap.dedent(code)).body[0]
    rd = ReachingDefinitions(func)
    aug = func.body[1]
    assert [b.stmt.lineno for b in rd.at(aug.target).bindings] == [3]
    _, reach = _uses(code, "acc")[0][-1]
    assert _lines(reach) == [5]


def test_before_answers_for_any_node_by_position():
    uses, rd, func = _uses("""
    def k(p, BLOCK):
        b = tl.load(p)
        b = b[:, None]
        tl.store(p, b)
    """, "b")
    store = func.body[2]
    assert _lines(rd.before("b", store)) == [4]
    assert _lines(rd.before("b", func.body[1])) == [3]
