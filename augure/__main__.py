import sys

from augure.cli import main

sys.exit(main())
