"""Cross-references and citations as the PDF prints them: `\\ref{x}` -> "2.3", `\\cref{a,b}` -> "Lemmas 2.3 and 2.4".

Rendering runs this over prose (math already set aside) before anything else: each reference becomes
its printed text, commands that print nothing (`\\index`, `\\label`, `\\phantomsection`, `\\-`) vanish,
and link commands keep their visible text. What is printed verbatim (a number, a citation label, a URL,
`\\ensuremath`'s math) goes out as a piece to put back after rendering, so neither renderer touches it.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Callable, Mapping, Optional

from transforms.latex.conditionals import first_definitions
from transforms.latex.model import LabelTarget
from transforms.latex.scan import group, skip_spaces, split_top_level

UNKNOWN = "??"          # what LaTeX prints for a label it does not know
MAX_ARGUMENT = 2000
_MAX_DEPTH = 4

_REF = {"ref", "pageref", "vref", "Vref", "eqref", "cref", "Cref", "cpageref", "Cpageref", "labelcref",
        "autoref", "Autoref", "nameref", "Nameref", "namecref", "nameCref", "subref"}
_SILENT = {"phantomsection", "xspace", "nobreak", "allowbreak", "protect", "leanok", "mathlibok", "notready"}
_NO_SPACE_BEFORE = ".,;:!?)]'/-"
# leanblueprint's commands print nothing in the PDF; they are read as edges and formal declarations.
BLUEPRINT_COMMANDS = frozenset({"uses", "lean", "leanok", "mathlibok", "notready", "proves", "discussion"})
# Commands rendering prints itself: an author's (re)definition of them is not expanded (often a
# conditional branch of a package's own reference machinery, which expansion cannot follow).
RESOLVED_COMMANDS = BLUEPRINT_COMMANDS | frozenset(_REF) | {"label", "cite", "index"}
_DROP_ONE = {"index", "label", "nocite", "glsadd", "myindex", "indexdef", "addcontentsline", "pdfbookmark",
             "includegraphics", "uses", "lean", "proves", "discussion"}
_KEEP_LAST = {"href": 2, "hyperlink": 2, "hypertarget": 2, "hyperref": 1}
_VERBATIM = {"url", "nolinkurl", "path"}
_COMMAND_RE = re.compile(
    r"\\(?:(?P<word>[A-Za-z]*refs?|[A-Za-z]*[cC]ite[A-Za-z]*|index|label|nocite|glsadd|myindex|indexdef|"
    r"addcontentsline|pdfbookmark|includegraphics|uses|lean|leanok|mathlibok|notready|proves|discussion|href|hyperlink|hypertarget|url|nolinkurl|path|phantomsection|xspace|"
    r"nobreak|allowbreak|protect|ensuremath)(?![A-Za-z@])(?P<star>\*?)|(?P<soft>-))")
_CITE_RE = re.compile(r"(?:[A-Za-z]*cite[A-Za-z]*|Cite[A-Za-z]*)")
_NATBIB_LABEL_RE = re.compile(r"^(?P<authors>.*?)\((?P<year>[^()]*)\)")

# cleveref's default names (singular, plural), lowercase; \Cref and the `capitalise` option capitalise.
_CREF_NAMES = {"equation": ("eq.", "eqs."), "section": ("section", "sections"), "chapter": ("chapter", "chapters"),
               "part": ("part", "parts"), "figure": ("fig.", "figs."), "table": ("table", "tables"),
               "item": ("item", "items")}
_AUTOREF_NAMES = {"equation": "Equation", "section": "Section", "chapter": "chapter", "figure": "Figure",
                  "table": "Table", "item": "item", "part": "Part"}


@dataclasses.dataclass(frozen=True)
class References:
    """A document's labels and bibliography, and how its cleveref names things."""

    labels: Mapping[str, LabelTarget] = dataclasses.field(default_factory=dict)
    bibliography: Mapping[str, str] = dataclasses.field(default_factory=dict)   # key -> printed label
    capitalise: bool = False
    cref_names: Mapping[str, tuple[str, str]] = dataclasses.field(default_factory=dict)  # `\\crefname`s by
    # display name ("Lemma") or kind ("equation"): (singular, plural) as the author wrote them


NO_REFERENCES = References()


def _plural(name: str) -> str:
    if name.endswith("y") and not name.endswith(("ay", "ey", "oy")):
        return name[:-1] + "ies"
    return name if name.endswith("s") else name + "s"


def _kind_key(target: LabelTarget) -> str:
    if target.kind == "section":
        return "chapter" if target.display_name == "Chapter" else "part" if target.display_name == "Part" else "section"
    return target.kind


def _number(target: Optional[LabelTarget]) -> str:
    return UNKNOWN if target is None or target.number is None else target.number


def _cref(names: list[str], refs: References, capital: bool) -> str:
    """cleveref: consecutive labels of one kind share a (plural) name, the last joined by "and"."""
    if not names:                       # \cref{} (an author's macro passing no label) prints like a missing one
        return UNKNOWN
    runs: list[tuple[str, list[str]]] = []
    for name in names:
        target = refs.labels.get(name)
        if target is None or target.number is None:
            runs.append(("", [UNKNOWN]))
            continue
        key = _kind_key(target)
        number = f"({target.number})" if key == "equation" else target.number
        written = refs.cref_names.get(key if key != "statement" else target.display_name)
        if written:
            singular, plural = written
        elif key in _CREF_NAMES:
            singular, plural = _CREF_NAMES[key]
        else:
            singular = target.display_name or "??"
            singular = singular if capital or refs.capitalise else singular.lower()
            plural = _plural(singular)
        if capital or refs.capitalise:
            singular, plural = singular[:1].upper() + singular[1:], plural[:1].upper() + plural[1:]
        if runs and runs[-1][0] and runs[-1][0][0] == singular:
            runs[-1][1].append(number)
        else:
            runs.append(((singular, plural) if singular else "", [number]))
    parts = []
    for names_of, numbers in runs:
        listed = numbers[0] if len(numbers) == 1 else ", ".join(numbers[:-1]) + " and " + numbers[-1]
        if not names_of:
            parts.append(listed)
        else:
            parts.append(f"{names_of[0] if len(numbers) == 1 else names_of[1]} {listed}")
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def print_reference(command: str, labels: list[str], refs: References) -> tuple[str, Optional[str]]:
    """(printed text, LaTeX to render inline instead) for one reference command."""
    first = refs.labels.get(labels[0]) if labels else None
    if command in ("cref", "Cref", "vref", "Vref", "labelcref"):
        if command == "labelcref":
            return ", ".join(_number(refs.labels.get(n)) for n in labels), None
        return _cref(labels, refs, command[0] in "CV"), None
    if command in ("namecref", "nameCref"):
        text = _cref(labels[:1], refs, command == "nameCref")
        return text.rsplit(" ", 1)[0] if first is not None else UNKNOWN, None
    if command == "eqref":
        return f"({_number(first)})", None
    if command in ("autoref", "Autoref"):
        if first is None or first.number is None:
            return UNKNOWN, None
        key = _kind_key(first)
        name = _AUTOREF_NAMES.get(key, first.display_name)
        return (f"{name} {first.number}".strip() if name else first.number), None
    if command in ("nameref", "Nameref"):
        if first is not None and first.title:
            return "", first.title
        return _number(first), None
    return _number(first), None


def _citation(keys: list[str], refs: References) -> str:
    printed = []
    for key in keys:
        label = refs.bibliography.get(key, key)
        natbib = _NATBIB_LABEL_RE.match(label)
        printed.append(f"{natbib.group('authors').strip()}, {natbib.group('year')}" if natbib else label)
    return ", ".join(printed)


def _arguments(text: str, pos: int, optional: int, mandatory: int) -> Optional[tuple[list[str], list[str], int]]:
    """Up to `optional` bracketed and exactly `mandatory` braced arguments from pos, or None."""
    opts, mands = [], []
    for _ in range(optional):
        p = skip_spaces(text, pos)
        if not text.startswith("[", p):
            break
        got = group(text, p, MAX_ARGUMENT)
        if got is None:
            return None
        opts.append(got[0])
        pos = got[1]
    for _ in range(mandatory):
        p = skip_spaces(text, pos)
        if not text.startswith("{", p):
            return None
        got = group(text, p, MAX_ARGUMENT)
        if got is None:
            return None
        mands.append(got[0])
        pos = got[1]
    return opts, mands, pos


def _names(arguments) -> list[str]:
    """The comma-separated labels or keys of a command's mandatory argument, blanks dropped."""
    return [name.strip() for name in split_top_level(arguments[1][0]) if name.strip()]


def resolve_references(prose: str, refs: References, verbatim: Callable[[str], str], depth: int = 0,
                       math: bool = False) -> str:
    """Prose with references printed; `verbatim(text)` stores text to put back after rendering and
    returns its placeholder. In `math` (a `\\tag{by \\cref{x}}`) only references, citations, labels and
    index entries are touched: the rest is math LaTeX, kept verbatim."""
    if "\\" not in prose:
        return prose
    out: list[str] = []
    pos = 0
    for m in _COMMAND_RE.finditer(prose):
        if m.start() < pos:
            continue
        out.append(prose[pos:m.start()])
        pos = m.end()
        word = m.group("word")
        if math and not (word in _REF or word in ("label", "index") or word and _CITE_RE.fullmatch(word)):
            out.append(m.group())
            continue
        if m.group("soft"):
            continue
        if word in _SILENT:
            if word == "xspace":                     # a space unless punctuation follows
                pos = skip_spaces(prose, pos)
                if pos < len(prose) and prose[pos] not in _NO_SPACE_BEFORE:
                    out.append(" ")
            continue
        if word in _DROP_ONE:
            got = _arguments(prose, pos, 1 if word in ("addcontentsline", "pdfbookmark", "includegraphics") else 0,
                             3 if word == "addcontentsline" else 2 if word == "pdfbookmark" else 1)
            if got is not None:
                pos = got[2]
            continue
        if word in _KEEP_LAST:
            got = _arguments(prose, pos, 1 if word == "hyperref" else 0, _KEEP_LAST[word])
            if got is None:
                if word == "href":                   # \href{url} without its text: the URL is what shows
                    url = _arguments(prose, pos, 0, 1)
                    if url is not None:
                        out.append(verbatim(url[1][0]))
                        pos = url[2]
                continue
            pos = got[2]
            inner = got[1][-1]
            out.append(resolve_references(inner, refs, verbatim, depth + 1) if depth < _MAX_DEPTH else inner)
            continue
        if word in _VERBATIM:
            got = _arguments(prose, pos, 0, 1)
            if got is not None:
                out.append(verbatim(got[1][0]))
                pos = got[2]
            continue
        if word == "ensuremath":
            got = _arguments(prose, pos, 0, 1)
            if got is not None:
                out.append(verbatim(f"${got[1][0].strip()}$"))
                pos = got[2]
            continue
        if word in _REF:
            got = _arguments(prose, pos, 0, 1)
            if got is None:
                out.append(m.group())
                continue
            pos = got[2]
            printed, inline = print_reference(word, _names(got), refs)
            if inline is not None:
                out.append(resolve_references(inline, refs, verbatim, depth + 1) if depth < _MAX_DEPTH else inline)
            else:
                out.append(verbatim(printed))
            continue
        if word is not None and _CITE_RE.fullmatch(word):
            got = _arguments(prose, pos, 2, 1)
            if got is None:
                out.append(m.group())
                continue
            pos = got[2]
            keys = _names(got)
            note = got[0][-1].strip() if got[0] else ""
            if note and depth < _MAX_DEPTH:          # `\cite[\href{url}{Tag 0117}]{k}`: links in the note too
                note = resolve_references(note, refs, verbatim, depth + 1)
            out.append(verbatim("[" + _citation(keys, refs)))     # the note is prose: it is rendered
            out.append(f", {note}" if note else "")
            out.append(verbatim("]"))
            continue
        out.append(m.group())                        # a *ref/*cite word this module does not know
    out.append(prose[pos:])
    return "".join(out)


_CREFNAME_RE = re.compile(r"\\crefname\s*\{([^{}]+)\}\s*\{([^{}]*)\}\s*\{([^{}]*)\}")


def cref_names(declarations: str, display_names: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """The author's `\\crefname{env}{singular}{plural}`s, keyed by the environment's display name (or
    the counter's kind for equation, section, figure, ...). In a conditional not decided here, the
    first branch's `\\crefname` of an environment counts (`conditionals.first_definitions`)."""
    return {display_names.get(m.group(1), m.group(1)): (m.group(2).strip(), m.group(3).strip())
            for m in first_definitions(declarations, _CREFNAME_RE, lambda m: m.group(1).strip())
            if m.group(2).strip()}


_BIBITEM_RE = re.compile(r"\\bibitem\s*(?:\[(?P<label>(?:[^\[\]{}]|\{[^{}]*\})*)\])?\s*\{(?P<key>[^{}]+)\}"
                         r"|\\entry\{(?P<entry>[^{}]+)\}(?P<fields>(?:(?!\\endentry).){0,4000})", re.S)
_LABELALPHA_RE = re.compile(r"\\field\{labelalpha\}\{([^{}]*)\}")


def bibliography_labels(bbl: str) -> dict[str, str]:
    """{key: printed label} of a `.bbl` or `thebibliography`: `\\bibitem[Knu84]{k}` -> "Knu84", else 1, 2, ..."""
    labels: dict[str, str] = {}
    for n, m in enumerate(_BIBITEM_RE.finditer(bbl), 1):
        if m.group("entry"):                     # biblatex: alphabetic label when the style has one
            alpha = _LABELALPHA_RE.search(m.group("fields"))
            labels.setdefault(m.group("entry").strip(), alpha.group(1) if alpha else str(n))
            continue
        label = m.group("label")
        printed = re.sub(r"\\[A-Za-z@]+\s*|[{}]", "", label).strip() if label else ""
        labels.setdefault(m.group("key").strip(), printed or str(n))
    return labels


_ARXIV_ID = r"(\d{4}\.\d{4,5}|[a-z][a-z.\-]*/\d{7})"
_ARXIV_RE = re.compile(r"(?:arXiv\s*[:.]?\s*(?:\\?[a-z]+\s*)?|arxiv\.org/(?:abs|pdf)/|eprint\s*=\s*[{\"]\s*|\\eprint\s*\{\s*)"
                       + _ARXIV_ID, re.I)
_DOI_RE = re.compile(r"(10\.\d{4,9}/[^\s{}\\,\"]+)")
_BIB_ENTRY_RE = re.compile(r"@\s*[A-Za-z]+\s*\{\s*([^,\s{}]+)\s*,")
_ENTRY_START_RE = re.compile(r"\\bibitem\s*(?:\[(?:[^\[\]{}]|\{[^{}]*\})*\])?\s*\{([^{}]+)\}|\\entry\{([^{}]+)\}")


def _entries(text: str, start_re: re.Pattern) -> list[tuple[str, str]]:
    """(key, text of its entry) for each bibliography entry, an entry running to the next one."""
    starts = [(m.start(), next(g for g in m.groups() if g)) for m in start_re.finditer(text)]
    return [(key.strip(), text[pos:starts[i + 1][0] if i + 1 < len(starts) else len(text)])
            for i, (pos, key) in enumerate(starts)]


def cited_works(bbl: str = "", bib: str = "") -> dict[str, dict[str, Optional[str]]]:
    """{key: {"arxiv": id or None, "doi": doi or None}} from a `.bbl` (or `thebibliography`) and `.bib` text;
    keys with neither are left out. The `.bbl` wins when both name a key."""
    works: dict[str, dict[str, Optional[str]]] = {}
    for text, start_re in ((bib, _BIB_ENTRY_RE), (bbl, _ENTRY_START_RE)):
        for key, entry in _entries(text, start_re) if text else ():
            arxiv_id = _ARXIV_RE.search(entry)
            doi = _DOI_RE.search(entry)
            if arxiv_id or doi:
                works[key] = {"arxiv": arxiv_id.group(1) if arxiv_id else None,
                              "doi": doi.group(1).rstrip(".}").lower() if doi else None}
    return works
