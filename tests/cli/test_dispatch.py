"""The dispatcher imports only the sub-command it runs, and every sub-command is still reachable."""
import pkgutil
import subprocess
import sys

from tritonify.cli import commands
from tritonify.cli.main import _command_modules, build_parser


def test_each_command_module_is_named_after_its_command():
    # `tritonify NAME` imports only commands/NAME.py: a module whose NAME differs would be unreachable
    names = [i.name for i in pkgutil.iter_modules(commands.__path__) if not i.name.startswith("_")]
    mods = _command_modules()
    assert sorted(m.NAME for m in mods) == sorted(names)
    for name in names:
        (only,) = _command_modules(name)
        assert only.NAME == name


def test_profile_starts_without_the_lint_engine():
    code = ("import sys; from tritonify.cli.main import build_parser; build_parser('profile'); "
            "print('tritonify.diagnostics.engine' in sys.modules, 'tritonify.cli.commands.check' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False"]


def test_help_and_unknown_commands_still_list_every_command(capsys):
    parser = build_parser("nosuch")
    help_text = parser.format_help()
    for mod in _command_modules():
        assert mod.NAME in help_text
