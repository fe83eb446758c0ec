"""arXiv bundles, members, folders and metadata: every archive built here, at test time."""
import gzip
import io
import json
import tarfile

import pytest

from transforms.latex.model import Limits
from transforms.sources import archive, arxiv, arxiv_ids
from transforms.sources.base import InvalidIdentifier, group_name

ARXIV = arxiv.Arxiv()

TEX = b"\\documentclass{article}\\begin{document}\\begin{theorem}x\\end{theorem}\\end{document}\n"


def tar_of(entries) -> bytes:
    """A tar from (TarInfo-like spec) entries: (name, bytes) or (name, type, linkname)."""
    sink = io.BytesIO()
    with tarfile.open(fileobj=sink, mode="w", format=tarfile.USTAR_FORMAT) as out:
        for entry in entries:
            info = tarfile.TarInfo(entry[0])
            if len(entry) == 2:
                info.size = len(entry[1])
                out.addfile(info, io.BytesIO(entry[1]))
            else:
                info.type, info.linkname = entry[1], entry[2]
                out.addfile(info)
    return sink.getvalue()


def gz(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def bundle_file(tmp_path, name, members) -> str:
    path = tmp_path / name
    path.write_bytes(tar_of(members))
    return str(path)


@pytest.mark.parametrize("stem, expected", [
    ("2101.99001", ("2101.99001", None)),
    ("0704.0001v3", ("0704.0001", "v3")),
    ("math9901999", ("math/9901999", None)),
    ("hep-th9901001", ("hep-th/9901001", None)),
    ("cond-mat9901001v2", ("cond-mat/9901001", "v2")),
])
def test_member_stems_map_to_arxiv_ids(stem, expected):
    assert arxiv_ids.parse_stem(stem) == expected


@pytest.mark.parametrize("stem", ["my-notes", "2113.00001", "2101.001", "MATH9901999", "2101.00001v", ""])
def test_names_without_an_arxiv_id_are_refused(stem):
    with pytest.raises(InvalidIdentifier):
        arxiv_ids.parse_stem(stem)


@pytest.mark.parametrize("source_id, year", [
    ("2101.99001", 2021), ("9901.00001", 1999), ("math/9901999", 1999), ("hep-th/0211159", 2002),
])
def test_year_from_the_ids_yymm(source_id, year):
    assert arxiv_ids.year_from_id(source_id) == year


def test_member_kinds_from_names():
    assert arxiv_ids.member_ref("9901/math9901999.gz", "b.tar", 0, 1).source_id == "math/9901999"
    assert arxiv_ids.member_ref("2101/2101.99007.pdf", "b.tar", 0, 1).kind == "pdf"
    assert arxiv_ids.member_ref("2101/2101.99007.ps", "b.tar", 0, 1).kind == "unsupported"
    assert group_name("s3://arxiv/src/arXiv_src_2101_001.tar") == "arXiv_src_2101_001"


def test_gzipped_tar_and_gzipped_single_tex_are_told_apart_by_content():
    as_tar = archive.unpack_submission(gz(tar_of([("main.tex", TEX), ("./fig/a.txt", b"x")])), "x.tex",
                                       Limits(), "loc")
    assert as_tar.files == {"main.tex": TEX, "fig/a.txt": b"x"} and not as_tar.events
    single = archive.unpack_submission(gz(TEX), "2101.00001.tex", Limits(), "loc")
    assert single.files == {"2101.00001.tex": TEX}
    plain = archive.unpack_submission(TEX, "p.tex", Limits(), "loc")
    assert plain.files == {"p.tex": TEX}


def test_unsafe_members_are_ignored_and_counted():
    data = tar_of([
        ("ok.tex", TEX), ("/etc/passwd", b"root"), ("../escape.tex", b"x"), ("a/../../b.tex", b"y"),
        ("link.tex", tarfile.SYMTYPE, "/etc/passwd"), ("hard.tex", tarfile.LNKTYPE, "ok.tex"),
        ("dev", tarfile.CHRTYPE, ""), ("fifo", tarfile.FIFOTYPE, ""),
    ])
    result = archive.unpack_submission(gz(data), "s.tex", Limits(), "b!m")
    assert result.files == {"ok.tex": TEX}
    unsafe = [e for e in result.events if e.error_class == "unsafe-member"]
    assert len(unsafe) == 7 and not result.fatal
    assert {e.location for e in unsafe} >= {"b!m//etc/passwd", "b!m/../escape.tex", "b!m/link.tex"}


def test_truncated_gzip_keeps_what_could_be_read():
    text = b"\\begin{theorem}A\\end{theorem}\n" * 4000
    packed = gz(text)
    result = archive.unpack_submission(packed[: len(packed) // 2], "t.tex", Limits(), "loc")
    (event,) = result.events
    assert event.error_class == "truncated-gzip" and not event.fatal
    kept = result.files["t.tex"]
    assert 0 < len(kept) < len(text) and text.startswith(kept)


def test_truncated_tar_keeps_the_complete_members():
    data = tar_of([("a.tex", TEX), ("b.tex", b"B" * 5000), ("c.tex", TEX)])
    result = archive.unpack_submission(gz(data[:1536 + 2048]), "x.tex", Limits(), "loc")
    assert result.files == {"a.tex": TEX}
    assert [e.error_class for e in result.events] == ["truncated-tar"]


def test_zero_byte_member_and_empty_archive_fail_with_a_reason():
    assert archive.unpack_submission(b"", "x.tex", Limits(), "loc").events[0].error_class == "empty-member"
    empty_tar = archive.unpack_submission(gz(tar_of([("d/", tarfile.DIRTYPE, "")])), "x", Limits(), "loc")
    assert empty_tar.fatal and empty_tar.events[-1].error_class == "empty-member"
    with_empty_file = archive.unpack_submission(gz(tar_of([("main.tex", TEX), ("empty.tex", b"")])), "x",
                                                Limits(), "loc")
    assert with_empty_file.files == {"main.tex": TEX, "empty.tex": b""}


def test_gzip_bomb_stops_at_the_decompressed_limit():
    bomb = gz(b"\0" * (8 << 20))
    out, events = archive.gunzip_bounded(bomb, 1 << 20, "loc")
    assert len(out) == 1 << 20
    assert events[0].error_class == "submission-too-large" and events[0].fatal
    result = archive.unpack_submission(bomb, "x", Limits(max_submission_bytes=1 << 20), "loc")
    assert result.fatal and not result.files


def test_file_and_count_limits():
    many = tar_of([(f"f{i}.tex", b"x") for i in range(5)])
    too_many = archive.unpack_submission(gz(many), "x", Limits(max_files=3), "loc")
    assert too_many.fatal and too_many.events[-1].error_class == "too-many-files"
    big = tar_of([("main.tex", TEX), ("huge.dat", b"h" * 1000)])
    result = archive.unpack_submission(gz(big), "x", Limits(max_file_bytes=500), "loc")
    assert result.files == {"main.tex": TEX}
    assert [e.error_class for e in result.events] == ["file-too-large"] and not result.fatal


def test_corrupt_and_multi_member_gzip():
    corrupt = bytearray(gz(TEX * 50))
    corrupt[20:30] = b"\xff" * 10
    out, events = archive.gunzip_bounded(bytes(corrupt), 1 << 20, "loc")
    assert events[0].error_class == "corrupt-gzip"
    out, events = archive.gunzip_bounded(gz(b"first ") + gz(b"second"), 1 << 20, "loc")
    assert out == b"first second" and not events


def sample_bundle(tmp_path):
    return bundle_file(tmp_path, "arXiv_src_2101_001.tar", [
        ("2101/2101.00001.gz", gz(tar_of([("main.tex", TEX)]))),
        ("2101/2101.00002.gz", gz(TEX)),
        ("2101/2101.00003.pdf", b"%PDF-1.4\n"),
        ("2101/math0101001.gz", gz(TEX)),
    ])


def test_index_then_fetch_reads_each_member_by_offset(tmp_path):
    path = sample_bundle(tmp_path)
    found = arxiv.index_bundle(path)
    assert [r.source_id for r in found.refs] == ["2101.00001", "2101.00002", "2101.00003", "math/0101001"]
    assert found.group == "arXiv_src_2101_001" and not found.events
    subs = [ARXIV.fetch(r, Limits()) for r in found.refs]
    assert subs[0].files == {"main.tex": TEX}
    assert subs[1].files == {"2101.00002.tex": TEX}
    assert subs[2].skip_reason == "pdf-only" and subs[2].files == {}
    assert subs[3].paper_id == "arxiv:math/0101001" and subs[3].year == 2001
    assert subs[3].url == "https://arxiv.org/abs/math/0101001"


class _NonSeekableStore(arxiv.BundleStore):
    """Bundles as pure streams (what an S3 GET body is): indexing must not seek."""

    def open_stream(self, path):
        return io.BufferedReader(_Stream(open(path, "rb")))


class _Stream(io.RawIOBase):
    def __init__(self, handle):
        self.handle = handle

    def readable(self):
        return True

    def readinto(self, buffer):
        data = self.handle.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def close(self):
        self.handle.close()
        super().close()


def test_streaming_index_equals_seeking_index(tmp_path):
    path = sample_bundle(tmp_path)
    assert arxiv.index_bundle(path, _NonSeekableStore()).refs == arxiv.index_bundle(path).refs


def test_truncated_bundle_keeps_the_members_before_the_damage(tmp_path):
    path = sample_bundle(tmp_path)
    data = open(path, "rb").read()
    cut = tmp_path / "arXiv_src_2101_002.tar"
    cut.write_bytes(data[:1024 + 600])
    found = arxiv.index_bundle(str(cut))
    assert found.refs and found.refs[0].source_id == "2101.00001"
    assert any(e.error_class == "truncated-bundle" for e in found.events)
    unreadable = tmp_path / "arXiv_src_2101_003.tar"
    unreadable.write_bytes(b"not a tar at all" * 10)
    broken = arxiv.index_bundle(str(unreadable))
    assert not broken.refs and broken.events[0].fatal


def test_read_streams_every_submission_of_globbed_bundles(tmp_path):
    sample_bundle(tmp_path)
    subs = list(arxiv.read([str(tmp_path / "arXiv_src_*.tar")]))
    assert [s.source_id for s in subs] == ["2101.00001", "2101.00002", "2101.00003", "math/0101001"]
    with pytest.raises(FileNotFoundError, match="nothing-here"):
        arxiv.expand_inputs([str(tmp_path / "nothing-here*.tar")])


def test_folder_of_unpacked_submissions(tmp_path):
    root = tmp_path / "unpacked"
    (root / "2101.00001" / "sec").mkdir(parents=True)
    (root / "2101.00001" / "main.tex").write_bytes(TEX)
    (root / "2101.00001" / "sec" / "a.tex").write_bytes(b"A")
    (root / "2101.00001" / "evil.tex").symlink_to("/etc/passwd")
    (root / "math0101001.tar.gz").write_bytes(gz(tar_of([("m.tex", TEX)])))
    (root / "2101.00002.gz").write_bytes(gz(TEX))
    (root / "2101.00003.pdf").write_bytes(b"%PDF-1.4\n")
    (root / "2101.00004.tex").write_bytes(TEX)
    index = ARXIV.index(str(root), Limits())
    assert index.group == "unpacked"
    subs = {s.source_id: s for s in (ARXIV.fetch(r, Limits()) for r in index.refs)}
    assert sorted(subs) == ["2101.00001", "2101.00002", "2101.00003", "2101.00004", "math/0101001"]
    assert subs["2101.00001"].files == {"main.tex": TEX, "sec/a.tex": b"A"}
    assert [e.error_class for e in subs["2101.00001"].events] == ["unsafe-member"]
    assert subs["math/0101001"].files == {"m.tex": TEX}
    assert subs["2101.00002"].files == {"2101.00002.tex": TEX}
    assert subs["2101.00003"].skip_reason == "pdf-only"
    assert subs["2101.00004"].files == {"2101.00004.tex": TEX}


def test_folder_of_bundles_stands_for_its_bundles(tmp_path):
    sample_bundle(tmp_path)
    assert arxiv.expand_inputs([str(tmp_path)]) == [str(tmp_path / "arXiv_src_2101_001.tar")]


def test_metadata_record_to_paper_columns():
    line = json.dumps({
        "id": "math/9901999", "title": "  A  title\n spread ", "authors": "A. One, B. Two",
        "authors_parsed": [["One", "Ann", ""], ["Two", "Bob", "Jr"]], "categories": "math.LO cs.LO",
        "abstract": " Abs. ", "license": "cc-by", "doi": "10.1/x", "journal-ref": "J. 1",
        "versions": [{"version": "v1", "created": "Fri, 1 Jan 1999 10:00:00 GMT"},
                     {"version": "v2", "created": "Mon, 3 Jan 2000 10:00:00 GMT"}],
        "update_date": "2000-01-03"})
    source_id, record = arxiv.parse_metadata_line(line)
    fields = arxiv.paper_metadata(record)
    assert source_id == "math/9901999"
    assert fields == {"has_metadata": True, "title": "A title spread", "authors": ["Ann One", "Bob Two Jr"],
                      "categories": ["math.LO", "cs.LO"], "primary_category": "math.LO", "abstract": "Abs.",
                      "license": "cc-by", "doi": "10.1/x", "journal_ref": "J. 1", "version": "v2",
                      "created": "1999-01-01", "updated": "2000-01-03", "year": 1999}
    assert arxiv.parse_metadata_line("   ") is None
    with pytest.raises(ValueError):
        arxiv.parse_metadata_line("[1, 2]")
    assert arxiv.paper_metadata(None) == {"has_metadata": False}


def test_shared_bundles_are_read_completely(shared_corpora):
    subs = list(arxiv.read([str(shared_corpora / "arxiv")]))
    assert len(subs) == 9
    by_id = {s.source_id: s for s in subs}
    assert by_id["2101.99007"].skip_reason == "pdf-only"
    assert by_id["math/9901999"].year == 1999 and len(by_id["math/9901999"].files) == 48
    assert set(by_id["2101.99003"].files) == {"2101.99003.tex"}
    assert "defective-fpt.tex" in by_id["2101.99002"].files   # "./" prefixes normalized
    assert all(not e.fatal for s in subs for e in s.events)
    assert by_id["2101.99001"].bundle == "arXiv_src_2101_001.tar"


def test_committed_sample_bundles_equal_a_rebuild(tmp_path):
    import importlib.util

    from tests.conftest import SAMPLES

    spec = importlib.util.spec_from_file_location("build_sample", SAMPLES / "build_sample.py")
    builder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builder)
    for path in builder.build(tmp_path):
        assert path.read_bytes() == (SAMPLES / "arxiv" / path.name).read_bytes(), path.name
    refs = [r for path in ARXIV.expand_inputs([str(SAMPLES / "arxiv")]) for r in ARXIV.index(path, Limits()).refs]
    assert len(refs) == 12 and {r.kind for r in refs} == {"member", "pdf"}
    assert {"math/9905001", "hep-th/9905002"} <= {r.source_id for r in refs}
