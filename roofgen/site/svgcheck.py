"""Whether an SVG file is a drawing only: nothing in it runs or loads anything.

A logo is published as a file of the site; opened on its own (not through an
``<img>``), an SVG runs its scripts and event handlers with the site's origin. The
check refuses rather than rewrites: a team's logo is small, and a drawing needs none
of what is refused. The parser is the standard library's expat, safe once the
document declares no DOCTYPE (no entities, so no entity expansion and no external
entity), which is refused before parsing.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

__all__ = ["problem"]

_SVG_NS = "{http://www.w3.org/2000/svg}"
#: Elements that run code or embed another document.
_ACTIVE = {"script", "foreignobject", "iframe", "embed", "object", "handler", "listener"}
#: Elements that change an attribute (``<set attributeName="href" to="javascript:...">``).
_ANIMATION = {"set", "animate", "animatemotion", "animatetransform", "discard"}
#: What a reference may point at: a fragment of the same file, or an inline raster image.
_SAFE_REF = re.compile(r"#|data:image/(png|jpeg|gif|webp)[;,]", re.IGNORECASE)
_URL = re.compile(r"url\s*\(\s*['\"]?\s*([^'\")\s]*)", re.IGNORECASE)
_DECLARED = re.compile(rb"<!\s*(DOCTYPE|ENTITY)", re.IGNORECASE)
_XML_DECLARATION = re.compile(rb"\A(\xef\xbb\xbf)?<\?xml\s[^?]*\?>")


def problem(data: bytes) -> str:
    """Why the SVG ``data`` is refused ("" for a plain drawing)."""
    if b"\x00" in data:
        return "it is not UTF-8 text (it holds NUL bytes)"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"it is not UTF-8 text (byte {exc.start})"
    if _DECLARED.search(data):
        return "it declares a DOCTYPE or an entity"
    if b"<?" in _XML_DECLARATION.sub(b"", data, count=1):
        return "it holds a processing instruction (such as xml-stylesheet)"
    parser = ET.XMLParser()
    try:
        parser.feed(data)
        root = parser.close()
    except ET.ParseError as exc:
        return f"it is not well-formed XML ({exc})"
    if root.tag != f"{_SVG_NS}svg":
        return f"its root element is {_local(root.tag)!r}, not an SVG <svg> element"
    for element in root.iter():
        why = _element_problem(element)
        if why:
            return why
    return ""


def _local(name: object) -> str:
    text = str(name)
    return text.rsplit("}", 1)[-1]


def _element_problem(element: ET.Element) -> str:
    tag = _local(element.tag).lower()
    if tag in _ACTIVE:
        return f"it holds a <{_local(element.tag)}> element"
    if tag == "style" and _css_problem(element.text or ""):
        return f"its <style> {_css_problem(element.text or '')}"
    for name, value in element.attrib.items():
        why = _attribute_problem(tag, _local(name).lower(), value)
        if why:
            return f"<{_local(element.tag)} {_local(name)}=...> {why}"
    return ""


def _attribute_problem(tag: str, name: str, value: str) -> str:
    plain = re.sub(r"[\s\x00-\x1f]", "", value).lower()
    if name.startswith("on"):
        return "is an event handler"
    if "javascript:" in plain or "vbscript:" in plain:
        return "holds a javascript: address"
    if name in ("href", "src") and not _SAFE_REF.match(value.strip()):
        return "refers to another file or address (only #fragments and inline images)"
    if tag in _ANIMATION and name == "attributename" and plain.endswith("href"):
        return "animates a reference"
    if name == "style":
        return _css_problem(value)
    return ""


def _css_problem(css: str) -> str:
    if "@import" in css.lower():
        return "imports a style sheet"
    for url in _URL.findall(css):
        if not _SAFE_REF.match(url):
            return "loads an address with url()"
    return ""
