"""Flatten a document: inline `\\input`, `\\include`, `\\subfile`, `\\import` and local packages.

The result is one string plus a `SourceMap` from flattened offsets back to (file, line), so each
statement can say where its author wrote it. Includes resolve relative to the submission (the
current file's folder, the main file's folder, then the root) and never outside it; cycles, missing
files, depth and size limits become `Event`s and flattening goes on.
"""
from __future__ import annotations

import bisect
import dataclasses
import posixpath
import re
from typing import Callable, Optional

from transforms.latex.conditionals import Switches, resolve_conditionals
from transforms.latex.definitions import definition_spans
from transforms.latex.model import Event, Limits
from transforms.latex.scan import mandatory as _mandatory, optional as _optional, skip_spaces as _skip_spaces

# Commands that pull in another file. olimport is the Open Logic Project's subfile wrapper.
_INCLUDE_RE = re.compile(
    r"\\(input|include|subfile|import|subimport|inputfrom|includefrom|subinputfrom|subincludefrom|"
    r"olimport|usepackage|RequirePackage|documentclass|endinput)(?![A-Za-z@])(\*?)")
_TWO_ARG = {"import", "subimport", "inputfrom", "includefrom", "subinputfrom", "subincludefrom"}
_PACKAGE_COMMANDS = {"usepackage", "RequirePackage", "documentclass"}
_RELATIVE_TO_CURRENT = {"subimport", "subinputfrom", "subincludefrom", "olimport", "subfile"}
_BARE_NAME_RE = re.compile(r"[^\s{}\\%]+")
_BEING_DEFINED_RE = re.compile(
    r"\\(?:DeclareDocumentCommand|NewDocumentCommand|newcommand|renewcommand|providecommand|def|let)"
    r"\*?\s*\{?\s*\Z")
_INCLUDEONLY_RE = re.compile(r"\\includeonly\s*\{([^{}]*)\}")
AFTER_ENDINPUT = "after-endinput"
EXCLUDED_BY_INCLUDEONLY = "excluded-by-includeonly"
_BEGIN_DOC = "\\begin{document}"
_END_DOC = "\\end{document}"


@dataclasses.dataclass
class SourceMap:
    """Pieces of the flattened text, each a run of one original file starting at a known line."""

    starts: list[int] = dataclasses.field(default_factory=list)
    files: list[str] = dataclasses.field(default_factory=list)
    first_lines: list[int] = dataclasses.field(default_factory=list)

    def add(self, start: int, file: str, line: int) -> None:
        if self.starts and self.starts[-1] == start:      # an empty piece: the later one wins
            self.files[-1], self.first_lines[-1] = file, line
        else:
            self.starts.append(start)
            self.files.append(file)
            self.first_lines.append(line)

    def locate_all(self, text: str, offsets: list[int]) -> dict[int, tuple[str, int]]:
        """(file, 1-based line) of every offset; one forward pass, so linear in the text."""
        found: dict[int, tuple[str, int]] = {}
        piece, pos, line = -1, 0, 0
        for offset in sorted(set(offsets)):
            i = max(bisect.bisect_right(self.starts, offset) - 1, 0)
            if not self.starts:
                return {o: ("", 1) for o in offsets}
            if i != piece:
                piece, pos, line = i, self.starts[i], self.first_lines[i]
            line += text.count("\n", pos, offset)
            pos = offset
            found[offset] = (self.files[i], line)
        return found


@dataclasses.dataclass
class Flattened:
    text: str
    source_map: SourceMap
    files_used: list[str]
    events: list[Event]
    ignored: list[tuple[str, str, str]] = dataclasses.field(default_factory=list)  # (file, text LaTeX skips, why)
    switches: Switches = dataclasses.field(default_factory=Switches)   # what the packages read set


class _Resolver:
    """Finds files of the submission by the names LaTeX would try."""

    def __init__(self, names: list[str], main_dir: str):
        self.names = set(names)
        self.lower = {}
        self.by_base: dict[str, list[str]] = {}
        for n in sorted(names):
            self.lower.setdefault(n.lower(), n)
            self.by_base.setdefault(posixpath.basename(n), []).append(n)
        self.main_dir = main_dir

    def _exists(self, path: str) -> Optional[str]:
        if path in self.names:
            return path
        return self.lower.get(path.lower())

    def resolve(self, name: str, current_dir: str, extensions: tuple[str, ...],
                relative_to_current: bool) -> Optional[str]:
        """The file TeX would read: the name (with each extension) in the including file's folder,
        the main file's folder and the root; then, as with `TEXINPUTS=.//`, the one file of the
        submission whose path ends with it."""
        name = name.strip().strip('"').strip()
        if not name:
            return None
        dirs = [current_dir, self.main_dir, ""] if relative_to_current else [self.main_dir, current_dir, ""]
        for d in dirs:
            base = posixpath.normpath(posixpath.join(d, name))
            if base.startswith("../") or base == ".." or base.startswith("/"):
                continue
            for ext in extensions:
                found = self._exists(base + ext)
                if found:
                    return found
        wanted = posixpath.normpath(name).lstrip("/")
        while wanted.startswith("../"):          # outside the submission: only a copy inside can be meant
            wanted = wanted[3:]
        for ext in extensions:
            hits = [h for h in self.by_base.get(posixpath.basename(wanted + ext), [])
                    if h.endswith("/" + wanted + ext)]
            if len(hits) == 1:
                return hits[0]
        return None


def _brace_delta(text: str, start: int, end: int) -> int:
    """Net brace depth change over text[start:end] (escaped braces do not count)."""
    return (text.count("{", start, end) - text.count("\\{", start, end)
            - text.count("}", start, end) + text.count("\\}", start, end))


def document_body_span(text: str) -> tuple[int, int]:
    """(start, end) of the body between \\begin{document} and \\end{document}; whole text if none."""
    b = text.find(_BEGIN_DOC)
    start = 0 if b < 0 else b + len(_BEGIN_DOC)
    e = text.find(_END_DOC, start)
    return start, (len(text) if e < 0 else e)


class _Flattener:
    def __init__(self, load: Callable[[str], Optional[str]], names: list[str], main: str,
                 limits: Limits, expand_path: Callable[[str], str]):
        self.load = load
        self.limits = limits
        self.expand_path = expand_path
        self.resolver = _Resolver(names, posixpath.dirname(main))
        self.out: list[str] = []
        self.size = 0
        self.map = SourceMap()
        self.events: list[Event] = []
        self.files_used: list[str] = []
        self.ignored: list[tuple[str, str, str]] = []
        self.include_only: Optional[set[str]] = None     # \includeonly{a,b}: the \include names LaTeX reads
        self.packages: set[str] = set()
        self.switches = Switches()                      # \newif booleans set by the packages read so far
        self.class_options: list[str] = []              # \documentclass[...]: global, seen by packages too
        self.stopped = False

    def _emit(self, piece: str, file: str, line: int) -> None:
        if self.stopped or not piece:
            return
        room = self.limits.max_submission_bytes - self.size
        if len(piece) > room:
            piece = piece[:max(room, 0)]
            self.stopped = True
            self.events.append(Event("flatten", "flatten-too-large",
                                     f"flattened text exceeds {self.limits.max_submission_bytes} bytes; rest ignored",
                                     f"{file}:{line}"))
        self.map.add(self.size, file, line)
        self.out.append(piece)
        self.size += len(piece)

    def run(self, main: str) -> Flattened:
        text = self.load(main) or ""
        only = _INCLUDEONLY_RE.search(text, 0, max(text.find(_BEGIN_DOC), 0))
        if only:
            self.include_only = {posixpath.normpath(n.strip()) for n in only.group(1).split(",") if n.strip()}
        self._file(main, text, 0, (main,), whole=True)
        return Flattened("".join(self.out), self.map, self.files_used, self.events, self.ignored, self.switches)

    def _file(self, path: str, text: str, depth: int, stack: tuple[str, ...], whole: bool) -> None:
        self.files_used.append(path)
        start, end, line = 0, len(text), 1
        if not whole and _BEGIN_DOC in text and "\\documentclass" in text:
            start, end = document_body_span(text)            # a subfile: its own preamble is not used
            line = 1 + text.count("\n", 0, start)
        current_dir = posixpath.dirname(path)
        pos = start
        braces = 0                                  # \endinput inside a macro body is not run
        spans: list[tuple[int, int]] = []          # definitions of this file, read when first needed
        while pos < end and not self.stopped:
            m = _INCLUDE_RE.search(text, pos, end)
            if not m:
                break
            command, star = m.group(1), m.group(2)
            braces += _brace_delta(text, pos, m.start())
            if _BEING_DEFINED_RE.search(text, max(pos, m.start() - 60), m.start()):
                self._emit(text[pos:m.end()], path, line)      # \newcommand{\input}..., not a use
                line += text.count("\n", pos, m.end())
                pos = m.end()
                continue
            self._emit(text[pos:m.start()], path, line)
            line += text.count("\n", pos, m.start())
            if command == "endinput":
                if braces > 0:
                    self._emit(text[m.start():m.end()], path, line)
                    pos = m.end()
                    continue
                self.ignored.append((path, text[m.end():end], AFTER_ENDINPUT))
                pos = end
                break
            targets, after = self._targets(text, m, command, star)
            resolved = False
            if braces > 0 and _inside_definition(text, m.start(), spans):
                # \newcommand{\appendixpart}{\input{appendix}}: runs only if called, so a missing
                # file is not reported; an existing one is inlined where the definition stands
                targets = [(name, exts, relative, True) for name, exts, relative, _ in targets]
            options = _optional(text, m.end())[0] if command in _PACKAGE_COMMANDS else None
            if command == "documentclass":       # global options, whether or not the class is local
                self.class_options = _option_list(options)
            for target in targets:
                resolved |= self._include(*target, command, current_dir, depth, stack, f"{path}:{line}", options)
            command_text = text[m.start():after]
            braces += _brace_delta(text, m.end(), after)
            keep = command in _PACKAGE_COMMANDS or not resolved
            self._emit(command_text if keep else blank(command_text), path, line)
            line += command_text.count("\n")
            pos = after
        if pos < end:
            self._emit(text[pos:end], path, line)

    def _targets(self, text: str, m: re.Match, command: str, star: str):
        """[(name, extensions, relative_to_current, optional)], index after the command."""
        pos = m.end()
        if command in ("usepackage", "RequirePackage"):
            _, pos = _optional(text, pos)
            got = _mandatory(text, pos)
            if not got:
                return [], m.end()
            names = [n.strip() for n in got[0].split(",") if n.strip()]
            return [(n, (".sty",), True, True) for n in names], got[1]
        if command == "documentclass":
            _, pos = _optional(text, pos)
            got = _mandatory(text, pos)
            if not got:
                return [], m.end()
            return [(got[0].strip(), (".cls",), True, True)], got[1]
        if command in _TWO_ARG:
            first = _mandatory(text, pos)
            second = _mandatory(text, first[1]) if first else None
            if not second:
                return [], m.end()
            return [(posixpath.join(first[0].strip(), second[0].strip()), (".tex", ""),
                     command in _RELATIVE_TO_CURRENT, False)], second[1]
        if command == "olimport":
            sub, pos = _optional(text, pos)
            got = _mandatory(text, pos)
            if not got:
                return [], m.end()
            _, after = _optional(text, got[1])
            name = got[0].strip()
            if sub:
                name = posixpath.join("content" if star else "", sub.strip(), name)
            return [(name, (".tex", ""), not star, False)], after
        got = _mandatory(text, pos)
        if got:
            exts = (".tex",) if command == "include" else (".tex", "")
            return [(got[0], exts, command in _RELATIVE_TO_CURRENT, False)], got[1]
        if command == "input":                    # TeX's own form: \input name
            bare = _BARE_NAME_RE.match(text, _skip_spaces(text, pos))
            if bare:
                return [(bare.group(), (".tex", ""), False, False)], bare.end()
        return [], m.end()

    def _include(self, name, extensions, relative, optional, command, current_dir,
                 depth, stack, location, options: Optional[str] = None) -> bool:
        """Inline one include; False when it could not be (the reason recorded unless optional)."""
        if "#" in name:                          # inside a macro definition: not a real include
            return False
        if "\\" in name:
            name = self.expand_path(name)
        if command == "include" and self.include_only is not None \
                and posixpath.normpath(name.strip()) not in self.include_only:
            target = self.resolver.resolve(name, current_dir, extensions, relative)
            text = self.load(target) if target else None
            if text is not None:                 # LaTeX reads only its .aux: nothing of it is typeset
                self.ignored.append((target, text, EXCLUDED_BY_INCLUDEONLY))
            return True
        if "\\" in name:
            if not optional:
                self.events.append(Event("flatten", "unresolved-include",
                                         f"\\{command}{{{name}}}: path uses a macro that is not known", location))
            return False
        target = self.resolver.resolve(name, current_dir, extensions, relative)
        if target is None:
            if not optional:
                self.events.append(Event("flatten", "missing-include",
                                         f"\\{command}{{{name}}}: no such file in the submission", location))
            return False
        if command in _PACKAGE_COMMANDS:
            if target in self.packages:          # LaTeX loads a package once
                return True
            self.packages.add(target)
        if target in stack:
            self.events.append(Event("flatten", "include-cycle",
                                     f"\\{command}{{{name}}}: {' -> '.join(stack + (target,))}", location))
            return False
        if depth + 1 > self.limits.include_depth:
            self.events.append(Event("flatten", "include-depth",
                                     f"\\{command}{{{name}}}: deeper than {self.limits.include_depth} includes",
                                     location))
            return False
        text = self.load(target)
        if text is None:
            self.events.append(Event("flatten", "unreadable-include", f"\\{command}{{{name}}}: {target} is not text",
                                     location))
            return False
        if command in _PACKAGE_COMMANDS:
            given = _option_list(options)
            if command != "documentclass":       # a package also runs the class's options it declares
                given = self.class_options + given
            text = resolve_conditionals(text, given, self.switches)
        self._file(target, text, depth + 1, stack + (target,), whole=command not in ("subfile", "olimport"))
        return True


def _option_list(options: Optional[str]) -> list[str]:
    return [o.strip() for o in (options or "").split(",") if o.strip()]


def _inside_definition(text: str, pos: int, spans: list[tuple[int, int]]) -> bool:
    """Is text[pos] inside the body of a macro definition? `spans` caches the file's definitions."""
    if not spans:
        spans.extend(definition_spans(text) or [(-1, -1)])
    i = bisect.bisect_right(spans, (pos, len(text))) - 1
    return i >= 0 and spans[i][0] < pos < spans[i][1]


def blank(text: str) -> str:
    return "\n" * text.count("\n")


def flatten(load: Callable[[str], Optional[str]], names: list[str], main: str, limits: Limits = Limits(),
            expand_path: Callable[[str], str] = lambda s: s) -> Flattened:
    """The document rooted at `main`, with every resolvable include inlined.

    `load(path)` returns a file's comment-stripped text (None for non-text); `names` lists the
    submission's paths; `expand_path` expands author macros in include paths (`\\input{\\olpath/x}`).
    """
    return _Flattener(load, names, main, limits, expand_path).run(main)
