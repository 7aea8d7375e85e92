"""``python -m mdlri_conformance.conformance.cli``: the same as ``mdlri-conformance``."""

import sys

from . import main

sys.exit(main())
