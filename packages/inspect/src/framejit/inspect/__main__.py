"""Entry point of ``python -m framejit.inspect`` (see ``cli.py``)."""

import sys

from .cli import main

sys.exit(main())
