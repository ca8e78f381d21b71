"""Exit statuses of `tritonify` and of the child processes it runs (as ruff uses them).

0: clean (no findings; the job did what was asked), 1: findings (a rule fired, a check failed,
a benchmark was incorrect), 2: the command could not do its work (bad arguments or input, an
internal error), 130: interrupted (Ctrl-C, a cancel from the editor).
"""

OK = 0
FINDINGS = 1
ERROR = 2
INTERRUPTED = 130
