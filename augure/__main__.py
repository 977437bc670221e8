"""The `augure` command (`python -m augure`, or the console script)."""

import os
import signal
import sys

from augure.common.import_guard import collector_paused


def main() -> int:
    with collector_paused():  # Augure and its libraries: made once, kept for the run
        from augure.cli.main import main as command

    try:
        code = command()
        sys.stdout.flush()  # so that a closed pipe is met here, not in the interpreter's exit
    except BrokenPipeError:
        # The reader has gone (`augure doctor | head -1`): stop quietly, as the Python docs on
        # SIGPIPE advise. What is still buffered goes nowhere, so the flush at exit cannot
        # fail again, and the status is a writer's cut off by the pipe.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 128 + signal.SIGPIPE
    return code


if __name__ == "__main__":
    sys.exit(main())
