"""``python -m framejit.guards.native``: build (or find) the native tensor guard helper now."""

import logging

from . import load, unavailable_reason

logging.basicConfig(level=logging.INFO)
module = load(wait=True)
print(module.__file__ if module is not None else f"unavailable: {unavailable_reason()}")
