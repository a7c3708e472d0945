"""JSON text that can sit inside an HTML ``<script>`` element (ADR 0020)."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["safe_json"]

# Escaped wherever they are in the document, as Go's encoding/json does: the text can
# then sit inside an HTML <script> element (the HTML report) and nothing a server
# named (a ``</script>`` in a test name) can end it. Still the same JSON to a reader.
_FOR_HTML = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})


def safe_json(document: Any) -> str:
    """``document`` as one line of JSON, every control character and ``< > &``
    escaped (``\\u001b``, ``\\u003c``): text from servers is data wherever it lands."""
    return json.dumps(document, separators=(",", ":")).translate(_FOR_HTML) + "\n"
