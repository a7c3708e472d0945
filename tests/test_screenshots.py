"""``bench/screenshots.py`` draws a terminal's frame as an SVG: what the frame says is
text in it, whatever a server named (issue 44; ADR 0012: escape, don't strip)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from bench.screenshots import terminal_svg

from .support.screen import Frame

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = "slot 1  cloning  git://x/</svg><script>alert(1)</script>&amp;  0.2 s"


def test_a_frame_is_text_in_the_svg_whatever_a_server_named() -> None:
    frame = Frame(("━━━━───── 1/2 · 0 failed", HOSTILE, ""))
    drawn = ET.fromstring(terminal_svg(frame))
    assert drawn.tag == f"{SVG}svg"
    texts = drawn.findall(f".//{SVG}text")
    assert ["".join(text.itertext()) for text in texts] == list(frame.lines[:2])
    assert not drawn.findall(f".//{SVG}script")
    assert texts[1].get("{http://www.w3.org/XML/1998/namespace}space") == "preserve"
