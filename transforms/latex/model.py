"""Plain dataclasses passed between the extraction steps, the sources and the Beam layer.

Everything here pickles with cloudpickle and carries no Beam types, so the steps are testable alone.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Optional


@dataclasses.dataclass(frozen=True)
class Limits:
    """Resource limits for one submission; every limit hit is recorded, never silently dropped."""

    # Sized from real papers: the largest decompressed submission in the shared corpora is 3.2 MB (a
    # whole book, 753 files), the largest arXiv member 1.3 MB, the largest file 617 KB.
    max_submission_bytes: int = 64 * 1024 * 1024    # decompressed files kept, all members together
    max_files: int = 5000                           # entries of any kind; past it only TeX sources are kept
    max_file_bytes: int = 32 * 1024 * 1024
    timeout_s: float = 60.0                         # CPU time (this thread's) of extraction for one paper
    include_depth: int = 16
    macro_depth: int = 32
    macro_output_bytes: int = 4 * 1024 * 1024       # per expanded statement
    regex_timeout_s: float = 2.0
    introduction_chars: int = 4000                  # of the introduction, for describer context; 0: not extracted


@dataclasses.dataclass
class Event:
    """A recorded problem or noteworthy action (fatal or not) with where it happened."""

    stage: str            # read | decode | flatten | discover | segment | macros | number | render | ...
    error_class: str      # e.g. "UnicodeDecodeError", "include-cycle", "timeout", "unsafe-member"
    message: str
    location: str = ""    # "file:line" or "bundle!member"
    fatal: bool = False


@dataclasses.dataclass
class EnvSpec:
    """A theorem-like environment as declared (or provided by a class)."""

    name: str                       # environment name as used in \begin{...}
    display_name: str               # "Theorem", "Main Theorem"
    kind: str                       # canonical kind (schemas.theorems.KINDS)
    numbered: bool = True
    counter: Optional[str] = None   # counter it shares (e.g. "theorem" for [theorem]); None: its own
    within: Optional[str] = None    # reset by this counter (e.g. "section")
    reset_by: Optional[str] = None  # reset by this counter, its number printed alone (llncs envcountreset)
    declared_by: str = ""           # "\\newtheorem", "\\declaretheorem", "builtin", ...


@dataclasses.dataclass
class DocEvent:
    """One event of the flattened body, in document order, that numbering needs."""

    pos: int
    type: str            # "sectioning" | "appendix" | "setcounter" | "addtocounter" | "stepcounter"
                         # | "refstepcounter" | "begin_statement" | "numberwithin" | "renewthe" | "edef"
                         # | "endgroup" (where the local "renewthe"/"edef" of that group stop holding)
    name: str = ""       # sectioning level name, counter name or environment name
    arg: Any = None      # value, starred flag, statement ordinal, ...


@dataclasses.dataclass
class LabelTarget:
    """What a `\\label` names, with the number `\\ref` prints for it."""

    label: str
    kind: str                         # statement | equation | section | item | figure | table | other
    number: Optional[str]             # as `\\ref` prints it; None when nothing numbered precedes it
    display_name: str = ""            # "Lemma", "Section", "Equation"
    ordinal: Optional[int] = None     # the statement's ordinal when kind == "statement"
    title: Optional[str] = None       # what `\\nameref` prints (section or statement title), raw LaTeX


@dataclasses.dataclass
class Statement:
    """One theorem-like statement, as extracted (no description or embedding yet)."""

    ordinal: int                      # order in the document, from 0
    kind: str
    env_name: str
    display_name: str
    number: Optional[str]
    title: Optional[str]
    label: Optional[str]
    section_path: list[str]
    file: str
    line: int
    statement_latex_raw: str          # body as written
    statement_latex: str              # body with user macros expanded
    statement_text: str               # plain-text rendering, math kept between $...$
    proof_latex: Optional[str] = None
    proof_text: Optional[str] = None  # the proof rendered like statement_text (macros expanded, refs printed)
    slogan: Optional[str] = None
    tag: Optional[str] = None         # Stacks Project tag
    url: Optional[str] = None         # link to this statement when the source has one (Stacks tag page, ...)


@dataclasses.dataclass
class ExtractionResult:
    """What extraction made of one submission."""

    statements: list[Statement]
    main_file: Optional[str] = None
    encoding: Optional[str] = None
    events: list[Event] = dataclasses.field(default_factory=list)
    unexpanded_macros: list[str] = dataclasses.field(default_factory=list)
    skipped_environments: list[tuple[str, str]] = dataclasses.field(default_factory=list)  # (env, reason)
    introduction: Optional[str] = None   # plain text of the introduction section, for LLM context
    n_bytes: int = 0                     # LaTeX bytes considered
    labels: dict[str, "LabelTarget"] = dataclasses.field(default_factory=dict)   # every \\label of the document
    bibliography: dict[str, str] = dataclasses.field(default_factory=dict)       # cite key -> printed label
    cited_works: dict[str, dict] = dataclasses.field(default_factory=dict)       # cite key -> {"arxiv", "doi"}


@dataclasses.dataclass
class Submission:
    """One paper's source files and what the source knows about it, before extraction."""

    paper_id: str                          # e.g. "arxiv:2101.99001", "arxiv:math/9901999", "hott-book"
    source: str                            # arxiv | latex-project | stacks | proofwiki
    source_id: str                         # e.g. "2101.99001", "math/9901999"
    files: dict[str, bytes]                # relative path -> bytes (never written to disk)
    version: Optional[str] = None
    bundle: str = ""
    member: str = ""
    skip_reason: Optional[str] = None      # set by the reader, e.g. "pdf-only"
    events: list[Event] = dataclasses.field(default_factory=list)  # reader problems (unsafe members, ...)
    metadata: Optional[dict] = None        # joined metadata snapshot record
    year: Optional[int] = None
    url: Optional[str] = None
