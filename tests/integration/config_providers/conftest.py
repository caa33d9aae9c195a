"""Config-provider tests: helpers importable by Spark's Python processes, and an environment
variable they can resolve (both set at collection, before the JVM and its workers start)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

CLIENT_ID_VARIABLE = "EOSCONNECT_PROVIDER_TEST_CLIENT_ID"
CLIENT_ID = "eosconnect-provider-test"

_HELPERS = str(Path(__file__).parent)
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (_HELPERS, os.environ.get("PYTHONPATH")) if p)
sys.path.insert(0, _HELPERS)
os.environ.setdefault(CLIENT_ID_VARIABLE, CLIENT_ID)
