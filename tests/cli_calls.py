"""One in-process `thmforge` call for tests: exit code, stdout and stderr (argparse exits through SystemExit)."""
from runners.cli import main


def run_cli(capfd, *argv) -> tuple[int, str, str]:
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    out, err = capfd.readouterr()
    return code, out, err
