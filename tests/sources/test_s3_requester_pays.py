"""The requester-pays reader against a real boto3 client whose HTTP layer is botocore's Stubber (offline)."""
import gzip
import io
import tarfile

import boto3
import pytest
from botocore.response import StreamingBody
from botocore.stub import Stubber

from transforms.latex.model import Limits
from transforms.sources import arxiv
from transforms.sources.s3_requester_pays import RequesterPaysS3, split_s3_url

TEX = b"\\documentclass{article}\\begin{document}x\\end{document}\n"


def _bundle() -> bytes:
    sink = io.BytesIO()
    with tarfile.open(fileobj=sink, mode="w", format=tarfile.USTAR_FORMAT) as out:
        for name in ("2101/2101.00001.gz", "2101/2101.00002.gz"):
            data = gzip.compress(TEX, mtime=0)
            info = tarfile.TarInfo(name)
            info.size = len(data)
            out.addfile(info, io.BytesIO(data))
    return sink.getvalue()


class _CountingStream(io.BytesIO):
    """A body that remembers the largest single read: streaming means no read of everything at once."""

    largest = 0

    def read(self, size=-1):
        data = super().read(size)
        _CountingStream.largest = max(_CountingStream.largest, len(data))
        return data


@pytest.fixture
def client():
    return boto3.client("s3", region_name="us-east-1", aws_access_key_id="test", aws_secret_access_key="test")


def _body(data: bytes, stream_class=io.BytesIO) -> StreamingBody:
    return StreamingBody(stream_class(data), len(data))


def test_split_s3_url():
    assert split_s3_url("s3://arxiv/src/arXiv_src_2101_001.tar") == ("arxiv", "src/arXiv_src_2101_001.tar")
    with pytest.raises(ValueError):
        split_s3_url("gs://arxiv/x")


def test_index_streams_the_bundle_and_fetch_uses_ranged_gets_with_request_payer(client):
    data = _bundle()
    url = "s3://arxiv/src/arXiv_src_2101_001.tar"
    key = {"Bucket": "arxiv", "Key": "src/arXiv_src_2101_001.tar", "RequestPayer": "requester"}
    store = arxiv.BundleStore(requester_pays=True, s3=RequesterPaysS3(client))
    with Stubber(client) as stub:
        _CountingStream.largest = 0
        stub.add_response("get_object", {"Body": _body(data, _CountingStream)}, key)
        found = arxiv.index_bundle(url, store)
        assert [r.source_id for r in found.refs] == ["2101.00001", "2101.00002"] and not found.events
        assert 0 < _CountingStream.largest < len(data)          # read in pieces, never whole
        ref = found.refs[1]
        member = data[ref.offset: ref.offset + ref.size]
        stub.add_response("get_object", {"Body": _body(member)},
                          {**key, "Range": f"bytes={ref.offset}-{ref.offset + ref.size - 1}"})
        sub = arxiv.Arxiv(requester_pays=True, s3=store.s3).fetch(ref, Limits())
        stub.assert_no_pending_responses()
    assert sub.files == {"2101.00002.tex": TEX} and sub.bundle == "arXiv_src_2101_001.tar"


def test_match_lists_pages_with_request_payer(client):
    reader = RequesterPaysS3(client)
    with Stubber(client) as stub:
        stub.add_response("list_objects_v2", {
            "IsTruncated": True, "NextContinuationToken": "t1",
            "Contents": [{"Key": "src/arXiv_src_2101_001.tar"}, {"Key": "src/arXiv_src_manifest.xml"}]},
            {"Bucket": "arxiv", "Prefix": "src/arXiv_src_2101_", "RequestPayer": "requester"})
        stub.add_response("list_objects_v2", {
            "IsTruncated": False, "Contents": [{"Key": "src/arXiv_src_2101_002.tar"}]},
            {"Bucket": "arxiv", "Prefix": "src/arXiv_src_2101_", "RequestPayer": "requester",
             "ContinuationToken": "t1"})
        found = reader.match("s3://arxiv/src/arXiv_src_2101_*.tar")
    assert found == ["s3://arxiv/src/arXiv_src_2101_001.tar", "s3://arxiv/src/arXiv_src_2101_002.tar"]


def test_reader_pickles_without_its_client(client):
    import pickle

    reader = pickle.loads(pickle.dumps(RequesterPaysS3(client)))
    assert reader._client is None
