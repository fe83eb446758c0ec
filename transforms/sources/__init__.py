"""Sources: where papers come from. Every source implements one contract, `base.Source`.

To add a source, write one module here and register it below; nothing else changes (the corpus
pipeline, the tables and the command line take it from the registry):

    class MySource(Source):                 # transforms/sources/my_source.py
        name = "my-source"                  # the `source` column and `--source my-source`
        def index(self, path, limits):      # one input -> InputIndex(group, bundle, refs, events)
        def extract(self, submission, limits):   # -> ExtractionResult (the shared LaTeX extractor)

and optionally
        def expand_inputs(self, inputs)     # globs, folders that stand for several inputs
        def fetch(self, ref, limits)        # refs that name bytes elsewhere (arXiv's bundle members)
        takes_metadata = True               # a `--metadata FILE` joined onto papers by id, with
        def parse_metadata_line(self, line) #   (key, record) per line and
        def attach_metadata(self, sub, record)   #   the record as papers columns

`index` gives one ref per paper: either a small pointer that `fetch` reads after the shuffle
(arXiv: bundle, offset, size) or, for inputs that must be read whole to be split, `Loaded(sub)`.
A ref's id is checked (`base.checked_id`) and made unique within its input (`base.unique_refs`,
newest version wins) before anything is fetched; copies across inputs and runs are settled
before the commit (`transforms.duplicates`). `Submission.bundle` is the input's stored name
(`base.input_name`), never the path as typed; `Submission.metadata` holds the paper's descriptive
fields under their `papers` column names. The modules:

    arxiv.py           bundles, folders of submissions (folder.py) and the metadata snapshot;
                       ids in arxiv_ids.py; safe in-memory unpacking in archive.py
    latex_project.py   one book or set of notes; title, authors, year from its front matter
    stacks.py          the Stacks Project, one paper per chapter, with tags
    proofwiki.py       a MediaWiki export, one paper per theorem or definition page
"""
import importlib

SOURCE_MODULES = {   # source name -> "module:class" implementing it
    "arxiv": "transforms.sources.arxiv:Arxiv",
    "latex-project": "transforms.sources.latex_project:LatexProject",
    "stacks": "transforms.sources.stacks:Stacks",
    "proofwiki": "transforms.sources.proofwiki:ProofWiki",
}


def make_source(name: str, **options):
    """The `base.Source` of `name` with its options (imported lazily: workers load only what they run)."""
    if name not in SOURCE_MODULES:
        raise ValueError(f"unknown source {name!r}; choose one of {', '.join(SOURCE_MODULES)}")
    module, cls = SOURCE_MODULES[name].split(":")
    return getattr(importlib.import_module(module), cls)(**options)
