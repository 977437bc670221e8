"""The `augure` command (`python -m augure`, or the console script)."""

import sys

from augure.import_guard import collector_paused


def main() -> int:
    with collector_paused():  # Augure and its libraries: made once, kept for the run
        from augure.cli import main as command

    return command()


if __name__ == "__main__":
    sys.exit(main())
