"""ProofWiki: a MediaWiki XML export to one submission per theorem or definition page.

The export is streamed page by page (`iterparse`, each page cleared once read), so a dump of any
size runs in constant memory. A theorem page carries `== Theorem ==` (or Lemma, Corollary,
Proposition) sections, each followed by `== Proof ==` (or `== Proof 1 ==`, ...); a page in the
`Definition:` namespace is a definition. Wikitext becomes LaTeX-flavoured text: `<math>` and `$...$`
stay math between `$`, links keep their label, templates vanish except the `{{eqn}}` rows of
equation blocks, which become display math.
"""
from __future__ import annotations

import bz2
import dataclasses
import gzip
import unicodedata
import urllib.parse
import xml.etree.ElementTree as ET
from typing import IO, Iterator, Optional

from transforms.latex.kinds import kind_for
from transforms.latex.macros import MacroTable, collect_macros, expand_macros
from transforms.latex.model import Event, ExtractionResult, Limits, Statement, Submission
from transforms.sources.base import InvalidIdentifier, WholeInputSource, checked_id, input_name

SOURCE = "proofwiki"
PAGE_URL = "https://proofwiki.org/wiki/"
PAGE_FILE = "page.wiki"
DEFINITION_PREFIX = "Definition:"
# ProofWiki's site-wide MathJax macros, so that statements read as standard LaTeX.
PROOFWIKI_MACROS = r"""
\newcommand{\paren}[1]{\left(#1\right)}
\newcommand{\struct}[1]{\left(#1\right)}
\newcommand{\set}[1]{\left\{#1\right\}}
\newcommand{\size}[1]{\left|#1\right|}
\newcommand{\card}[1]{\left|#1\right|}
\newcommand{\cmod}[1]{\left|#1\right|}
\newcommand{\norm}[1]{\left\|#1\right\|}
\newcommand{\sqbrk}[1]{\left[#1\right]}
\newcommand{\map}[2]{#1\left(#2\right)}
\newcommand{\closedint}[2]{\left[#1 \,.\,.\, #2\right]}
\newcommand{\openint}[2]{\left(#1 \,.\,.\, #2\right)}
\newcommand{\hointr}[2]{\left[#1 \,.\,.\, #2\right)}
\newcommand{\hointl}[2]{\left(#1 \,.\,.\, #2\right]}
\newcommand{\floor}[1]{\left\lfloor #1\right\rfloor}
\newcommand{\ceiling}[1]{\left\lceil #1\right\rceil}
\newcommand{\gen}[1]{\left\langle #1\right\rangle}
\newcommand{\divides}{\mathrel{|}}
\newcommand{\ds}{\displaystyle}
\newcommand{\N}{\mathbb{N}}
\newcommand{\Z}{\mathbb{Z}}
\newcommand{\Q}{\mathbb{Q}}
\newcommand{\R}{\mathbb{R}}
\newcommand{\C}{\mathbb{C}}
\DeclareMathOperator{\Dom}{Dom}
\DeclareMathOperator{\Img}{Img}
\DeclareMathOperator{\Cdm}{Cdm}
"""
STATEMENT_SECTIONS = {"theorem": "theorem", "lemma": "lemma", "corollary": "corollary",
                      "proposition": "proposition", "definition": "definition"}


# ------------------------------------------------------------------------------------- reading

def _open(path: str) -> IO[bytes]:
    if path.endswith(".bz2"):
        return bz2.open(path, "rb")
    if path.endswith(".gz"):
        return gzip.open(path, "rb")
    return open(path, "rb")


def _local(tag: str) -> str:
    """An element name without its `{namespace}` (exports use several schema versions)."""
    return tag.rsplit("}", 1)[-1]


def _child_text(elem: ET.Element, name: str) -> Optional[str]:
    for child in elem:
        if _local(child.tag) == name:
            return child.text
    return None


def _latest_revision(page: ET.Element) -> tuple[str, Optional[str]]:
    """(wikitext, timestamp) of the page's last revision in the export."""
    text, timestamp = "", None
    for child in page:
        if _local(child.tag) == "revision":
            text = _child_text(child, "text") or ""
            timestamp = _child_text(child, "timestamp")
    return text, timestamp


def is_statement_page(title: str, text: str) -> bool:
    """Definition pages, and main-namespace pages with a Theorem-like section."""
    if title.startswith(DEFINITION_PREFIX):
        return True
    if ":" in title.split("/", 1)[0]:
        return False            # other namespaces: Category:, User:, Help:, ...
    return any(level == 2 and _section_kind(name) not in (None, "definition")
               for level, name, _ in _headings(text))


def page_url(title: str) -> str:
    return PAGE_URL + urllib.parse.quote(title.replace(" ", "_"), safe="/:'(),")


def page_categories(text: str) -> list[str]:
    """The page's `[[Category:...]]` names, in order, without duplicates."""
    found: list[str] = []
    pos = 0
    while True:
        start = text.find("[[Category:", pos)
        if start < 0:
            return found
        end = text.find("]]", start)
        if end < 0:
            return found
        name = text[start + len("[[Category:"):end].split("|", 1)[0].strip()
        if name and name not in found:
            found.append(name)
        pos = end + 2


def _page_submission(title: str, page_id: Optional[str], text: str, timestamp: Optional[str],
                     path: str, limits: Limits) -> Submission:
    data = text.encode("utf-8")
    # metadata keys as in arXiv's records, so the papers table reads them the same way
    categories = page_categories(text)
    sub = Submission(paper_id=f"{SOURCE}:{title}", source=SOURCE, source_id=title, files={},
                     bundle=input_name(path), member=title, url=page_url(title),
                     metadata={"id": page_id, "title": title, "timestamp": timestamp,
                               "categories": [c.replace(" ", "_") for c in categories]})
    if timestamp and timestamp[:4].isdigit():
        sub.year = int(timestamp[:4])
    if len(data) > limits.max_file_bytes:
        sub.events.append(Event("read", "file-too-large",
                                f"page text {len(data)} bytes > {limits.max_file_bytes}",
                                f"{input_name(path)}!{title}",
                                fatal=True))
    else:
        sub.files[PAGE_FILE] = data
    return sub


def read_export(handle: IO[bytes], path: str, limits: Limits) -> Iterator[Submission]:
    """Statement pages of one export stream; a broken export ends with a failed submission."""
    root = None
    try:
        for event, elem in ET.iterparse(handle, events=("start", "end")):
            if root is None:
                root = elem
            if event != "end" or _local(elem.tag) != "page":
                continue
            title = (_child_text(elem, "title") or "").strip()
            redirect = any(_local(c.tag) == "redirect" for c in elem)
            text, timestamp = _latest_revision(elem)
            page_id = _child_text(elem, "id")
            elem.clear()
            root.clear()
            if title and not redirect and is_statement_page(title, text):
                try:
                    title = checked_id(title, "page title")
                except InvalidIdentifier as error:
                    yield _broken(ascii(title)[1:-1], path, "bad-title", str(error))
                    continue
                yield _page_submission(title, page_id, text, timestamp, path, limits)
    except (ET.ParseError, OSError, EOFError) as error:
        yield _broken(input_name(path), path, type(error).__name__, f"export unreadable: {error}")


def _broken(name: str, path: str, error_class: str, message: str) -> Submission:
    """A failed paper standing for what could not be read (`name` is printable ASCII)."""
    broken = Submission(paper_id=f"{SOURCE}:{name}", source=SOURCE, source_id=name, files={},
                        bundle=input_name(path), member=name)
    broken.events.append(Event("read", error_class, message, f"{input_name(path)}!{name}", fatal=True))
    return broken


def read(inputs: list[str], limits: Limits = Limits()) -> Iterator[Submission]:
    """Every theorem and definition page of the given export files (.xml, .xml.bz2, .xml.gz)."""
    for path in inputs:
        try:
            handle = _open(path)
        except OSError as error:
            yield _broken(input_name(path), path, type(error).__name__, f"{type(error).__name__}: {input_name(path)}")
            continue
        with handle:
            yield from read_export(handle, path, limits)


@dataclasses.dataclass(frozen=True)
class ProofWiki(WholeInputSource):
    """A MediaWiki export per input, read whole while indexing (XML cannot be split unparsed)."""

    name = SOURCE

    def read_input(self, path: str, limits: Limits) -> Iterator[Submission]:
        return read([path], limits)

    def extract(self, submission: Submission, limits: Limits) -> ExtractionResult:
        return extract(submission, limits)


# ------------------------------------------------------------------------------ wikitext to LaTeX

def _headings(text: str) -> Iterator[tuple[int, str, int]]:
    """(level, title, offset of the line after the heading) for every `== Title ==` line."""
    offset = 0
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped.startswith("==") and stripped.endswith("==") and len(stripped) > 4:
            level = len(stripped) - len(stripped.lstrip("="))
            closing = len(stripped) - len(stripped.rstrip("="))
            name = stripped[level:len(stripped) - closing].strip()
            if name and level == closing:
                yield level, name, offset + len(line)
        offset += len(line)


def _section_kind(name: str) -> Optional[str]:
    return STATEMENT_SECTIONS.get(name.strip().lower())


def _is_proof(name: str) -> bool:
    words = name.lower().split()
    return bool(words) and words[0] == "proof" and all(w.isdigit() for w in words[1:])


def _sections(text: str) -> list[tuple[str, int, int, int]]:
    """Level-2 sections as (title, heading line start, body start, body end)."""
    heads = [(level, name, end) for level, name, end in _headings(text)]
    out = []
    for i, (level, name, body_start) in enumerate(heads):
        if level != 2:
            continue
        end = len(text)
        for later_level, _, later_body_start in heads[i + 1:]:
            if later_level <= 2:
                end = text.rfind("\n", 0, later_body_start - 1) + 1
                break
        head_start = text.rfind("\n", 0, body_start - 1) + 1
        out.append((name, head_start, body_start, end))
    return out


def _remove_between(text: str, opening: str, closing: str) -> str:
    out, pos = [], 0
    while True:
        start = text.find(opening, pos)
        if start < 0:
            break
        end = text.find(closing, start + len(opening))
        out.append(text[pos:start])
        if end < 0:
            pos = len(text)
            break
        pos = end + len(closing)
    out.append(text[pos:])
    return "".join(out)


def _replace_tags(text: str, name: str, before: str, after: str) -> str:
    """`<name ...>x</name>` to before + x + after (an unclosed tag runs to the end)."""
    out, pos = [], 0
    opening = "<" + name
    closing = "</" + name + ">"
    while True:
        start = text.find(opening, pos)
        if start < 0:
            break
        head_end = text.find(">", start)
        if head_end < 0:
            break
        out.append(text[pos:start])
        if text[head_end - 1] == "/":          # <ref name="x"/>
            pos = head_end + 1
            continue
        end = text.find(closing, head_end + 1)
        inner = text[head_end + 1:end if end >= 0 else len(text)]
        if before is not None:
            out.append(before + inner.strip() + after)
        pos = len(text) if end < 0 else end + len(closing)
    out.append(text[pos:])
    return "".join(out)


def _split_template_args(inner: str) -> list[str]:
    """A template's `|`-separated parts, not splitting inside nested `{{ }}`, `[[ ]]` or `{ }`."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(inner):
        if c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
        elif c == "|" and depth == 0:
            parts.append(inner[start:i])
            start = i + 1
    parts.append(inner[start:])
    return parts


def _template(inner: str) -> str:
    """What a template shows: an `{{eqn}}` row as display math, anything else nothing."""
    parts = _split_template_args(inner)
    name = parts[0].strip().lower()
    if name not in ("eqn", "eqnarray", "equation"):
        return ""
    fields = {}
    for part in parts[1:]:
        key, sep, value = part.partition("=")
        if sep:
            fields[key.strip().lower()] = value.strip()
    if not (fields.get("l") or fields.get("r")):
        return ""
    relation = fields.get("o") or "="          # the template's default relation
    row = " ".join(part for part in (fields.get("l"), relation, fields.get("r")) if part)
    return f"\n$$ {row} $$\n"


def _expand_templates(text: str) -> str:
    out, pos = [], 0
    while True:
        start = text.find("{{", pos)
        if start < 0:
            break
        depth, i, n = 0, start, len(text)
        while i < n:
            if text.startswith("{{", i):
                depth += 1
                i += 2
            elif text.startswith("}}", i):
                depth -= 1
                i += 2
                if depth == 0:
                    break
            else:
                i += 1
        out.append(text[pos:start])
        if depth != 0:                          # unclosed: drop the rest of the template text
            pos = n
            break
        out.append(_template(text[start + 2:i - 2]))
        pos = i
    out.append(text[pos:])
    return "".join(out)


def _links(text: str) -> str:
    """`[[Target|label]]` to label, `[[Target]]` to Target; files and categories vanish."""
    out, pos = [], 0
    while True:
        start = text.find("[[", pos)
        if start < 0:
            break
        end = text.find("]]", start + 2)
        if end < 0:
            break
        target, _, label = text[start + 2:end].partition("|")
        out.append(text[pos:start])
        namespace = target.split(":", 1)[0].strip().lower() if ":" in target else ""
        if namespace not in ("file", "image", "category"):
            shown = label if label else target
            if not label and namespace == "definition":
                shown = target.split(":", 1)[1]
            out.append(shown.split("/")[-1] if not label else shown)
        pos = end + 2
    out.append(text[pos:])
    return "".join(out)


def wikitext_to_latex(text: str) -> str:
    """ProofWiki wikitext as LaTeX-flavoured text with math between `$`."""
    text = _remove_between(text, "<!--", "-->")
    text = _replace_tags(text, "ref", None, "")
    text = _replace_tags(text, "math", "$", "$")
    text = _expand_templates(text)
    text = _links(text)
    text = text.replace("'''", "").replace("''", "")
    for tag in ("<br>", "<br/>", "<br />", "<onlyinclude>", "</onlyinclude>", "<noinclude>", "</noinclude>"):
        text = text.replace(tag, " ")
    lines = [line.lstrip(":").rstrip() for line in text.split("\n")]
    return "\n".join(lines).strip()


def plain_text(latex: str) -> str:
    """Whitespace-normalized NFC text; math stays between `$` as in the other sources."""
    return unicodedata.normalize("NFC", " ".join(latex.replace("$$", "$").split()))


# ------------------------------------------------------------------------------------- extraction

def site_macros(limits: Limits) -> MacroTable:
    return collect_macros(PROOFWIKI_MACROS, limits)


def _statement(ordinal: int, kind: str, section: str, title: str, body_raw: str, line: int,
               proof_raw: Optional[str], macros: MacroTable, limits: Limits,
               unexpanded: list[str]) -> Statement:
    latex, failed = expand_macros(wikitext_to_latex(body_raw), macros, limits)
    unexpanded.extend(name for name in failed if name not in unexpanded)
    proof = wikitext_to_latex(proof_raw) if proof_raw is not None else None
    return Statement(
        ordinal=ordinal, kind=kind, env_name=section.lower(), display_name=section.strip().title(),
        number=None, title=title, label=title, section_path=[], file=PAGE_FILE, line=line,
        statement_latex_raw=body_raw.strip(), statement_latex=latex, statement_text=plain_text(latex),
        proof_latex=proof, proof_text=plain_text(proof) if proof is not None else None,
    )


def statements_of_page(title: str, text: str, limits: Limits = Limits(),
                       unexpanded: Optional[list[str]] = None) -> list[Statement]:
    """The statements of one page, each with the proof that follows it.

    ProofWiki's site macros are expanded in `statement_latex`; names given up on go to `unexpanded`.
    """
    macros = site_macros(limits)
    unexpanded = [] if unexpanded is None else unexpanded
    extra = (macros, limits, unexpanded)
    sections = _sections(text)
    found: list[Statement] = []
    if title.startswith(DEFINITION_PREFIX):
        name = title[len(DEFINITION_PREFIX):]
        for section, head, start, end in sections:
            if _section_kind(section) == "definition":
                return [_statement(0, "definition", "Definition", name, text[start:end],
                                   text.count("\n", 0, head) + 2, None, *extra)]
        first = sections[0][1] if sections else len(text)
        if not text[:first].strip():
            return []
        return [_statement(0, "definition", "Definition", name, text[:first], 1, None, *extra)]
    for i, (section, head, start, end) in enumerate(sections):
        section_kind = _section_kind(section)
        if section_kind is None or section_kind == "definition":
            continue
        kind = kind_for(title) if section_kind == "theorem" else section_kind
        if kind in ("other", "definition", "proof"):
            kind = section_kind
        proof = None
        for later, _, proof_start, proof_end in sections[i + 1:]:
            if _is_proof(later):
                proof = text[proof_start:proof_end]
                break
            if _section_kind(later):
                break
        found.append(_statement(len(found), kind, section, title, text[start:end],
                                text.count("\n", 0, head) + 2, proof, *extra))
    return found


def extract(submission: Submission, limits: Limits = Limits()) -> ExtractionResult:
    """The statements of one page submission; a failure is recorded, never raised."""
    data = submission.files.get(PAGE_FILE)
    if data is None:
        return ExtractionResult([], events=list(submission.events))
    title = submission.source_id
    unexpanded: list[str] = []
    try:
        text = data.decode("utf-8")
        statements = statements_of_page(title, text, limits, unexpanded)
    except (UnicodeDecodeError, ValueError, IndexError) as error:
        return ExtractionResult([], main_file=PAGE_FILE, events=[
            Event("segment", type(error).__name__, str(error), f"{submission.bundle}!{title}", fatal=True)])
    for statement in statements:
        statement.url = submission.url
    return ExtractionResult(statements, main_file=PAGE_FILE, encoding="utf-8", n_bytes=len(data),
                            events=list(submission.events), unexpanded_macros=unexpanded)
