"""Bytes to text: UTF-8 first, then the encoding the file declares via inputenc, then a detector.

arXiv holds Latin-1 and Windows-1252 sources next to UTF-8 ones; decoding must never fail and the
encoding actually used is recorded per paper.
"""
from __future__ import annotations

import codecs
import re
from typing import Optional

import charset_normalizer

# inputenc option -> Python codec.
_INPUTENC_CODECS = {
    "utf8": "utf-8", "utf8x": "utf-8", "latin1": "latin-1", "latin2": "iso8859-2",
    "latin3": "iso8859-3", "latin4": "iso8859-4", "latin5": "iso8859-9", "latin9": "iso8859-15",
    "latin10": "iso8859-16", "ansinew": "cp1252", "cp1252": "cp1252", "cp1250": "cp1250",
    "cp1251": "cp1251", "cp1257": "cp1257", "cp850": "cp850", "cp852": "cp852", "cp437": "cp437",
    "cp865": "cp865", "applemac": "mac-roman", "macce": "mac-latin2", "koi8-r": "koi8-r",
    "koi8-u": "koi8-u", "cp866": "cp866", "decmulti": "latin-1", "next": "latin-1",
}
_INPUTENC_RE = re.compile(rb"\\usepackage\s*\[([A-Za-z0-9,\- ]{1,80})\]\s*\{inputenc\}")
_BINARY_PROBE = 8192


def looks_binary(data: bytes) -> bool:
    """True for data that cannot be LaTeX source (NUL bytes in its first 8 KiB)."""
    return b"\x00" in data[:_BINARY_PROBE]


def declared_encoding(data: bytes) -> Optional[str]:
    """The Python codec named by a `\\usepackage[...]{inputenc}` in `data`, if any."""
    m = _INPUTENC_RE.search(data)
    if not m:
        return None
    for option in m.group(1).decode("ascii", "replace").split(","):
        codec = _INPUTENC_CODECS.get(option.strip().lower())
        if codec:
            return codec
    return None


_WESTERN_EXTRA = set("\u201c\u201d\u2018\u2019\u201e\u2013\u2014\u20ac\u2026\u2022\u00a0\u00a7\u00b0\u00b7\u00ab\u00bb")
_ASCII_BYTES = bytes(range(128))
_ASCII_LETTER_BYTES = bytes(b for b in range(128) if chr(b).isalpha())
# bytes read in cp1252 as an accented Latin letter (U+00C0..U+00FF) or one of the extra Western characters
_WESTERN_BYTES = bytes(b for b in range(128, 256) if "\u00c0" <= bytes([b]).decode("cp1252", "replace") <= "\u00ff"
                       or bytes([b]).decode("cp1252", "replace") in _WESTERN_EXTRA)


def _western(data: bytes) -> Optional[str]:
    """`data` as Windows-1252 when that reads as Western European text (accented letters, curly
    quotes, dashes, euro): by far the most common non-UTF-8 encoding of LaTeX sources, and one that
    statistical detectors confuse with Central European code pages on short texts."""
    try:
        text = data.decode("cp1252")
    except UnicodeDecodeError:
        return None
    # cp1252 reads one byte as one character, so the characters are counted as bytes, in C
    special = len(data.translate(None, _ASCII_BYTES))
    western = len(data) - len(data.translate(None, _WESTERN_BYTES))
    ascii_letters = len(data) - len(data.translate(None, _ASCII_LETTER_BYTES))
    # accented letters sit among plain ones; Cyrillic or Greek code pages read as cp1252 do not
    plausible = special and western >= 0.95 * special and special <= 0.5 * ascii_letters
    return text if plausible else None


def decode_tex(data: bytes, hint: Optional[str] = None) -> tuple[str, str]:
    """(text, encoding used). `hint` is an encoding already learnt from another file of the paper."""
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8):]
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    for codec in (declared_encoding(data), hint):
        if codec and codec != "utf-8":
            try:
                return data.decode(codec), codec
            except UnicodeDecodeError:
                pass
    western = _western(data)
    if western is not None:
        return western, "cp1252"
    best = charset_normalizer.from_bytes(data[:1 << 20]).best()
    if best is not None and best.encoding not in ("utf_8", "ascii"):
        try:
            return data.decode(best.encoding), best.encoding.replace("_", "-")
        except (UnicodeDecodeError, LookupError):
            pass
    return data.decode("cp1252", errors="replace"), "cp1252"


def unix_line_ends(text: str) -> str:
    """CR LF and a lone CR (old Mac files) end a line for TeX; as "\\n" they count as lines here too."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text
