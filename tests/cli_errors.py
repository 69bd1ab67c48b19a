"""What a refused command line must look like, for the tests of bad input (one helper, imported by each)."""

from dynpr.cli import main
from dynpr.errors import EXIT_INPUT


def one_error_line(capsys, argv, code=EXIT_INPUT) -> str:
    """Run ``dynpr argv``; assert it exits ``code`` with one ``dynpr: error:`` line and no traceback; return it."""
    try:
        status = main(argv)
    except SystemExit as exit_:  # argparse
        status = exit_.code
    err = capsys.readouterr().err.strip().splitlines()
    assert status == code, err
    assert len(err) == 1 and err[0].startswith("dynpr: error: "), err
    assert "Traceback" not in err[0]
    return err[0]
