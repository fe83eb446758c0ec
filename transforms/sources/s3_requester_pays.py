"""Reading arXiv's requester-pays bucket (`s3://arxiv/src/...`) with boto3.

Beam's S3 filesystem cannot send `RequestPayer`, and arXiv's bucket refuses requests without it.
This reader sends `RequestPayer='requester'` on every call (you pay the transfer; credentials come
from the usual AWS chain: environment, profile or instance role) and never buffers an object:
`open_stream` streams one GET body for indexing a bundle, `read_range` fetches one member with a
ranged GET, and `match` lists keys for globs such as `s3://arxiv/src/arXiv_src_2101_*.tar`.
"""
from __future__ import annotations

import fnmatch
from typing import BinaryIO, Iterator, Optional


def split_s3_url(url: str) -> tuple[str, str]:
    """`s3://bucket/key` to (bucket, key)."""
    if not url.startswith("s3://"):
        raise ValueError(f"not an s3:// URL: {url!r}")
    bucket, _, key = url[len("s3://"):].partition("/")
    if not bucket:
        raise ValueError(f"no bucket in {url!r}")
    return bucket, key


class RequesterPaysS3:
    """Streaming, ranged and listing access to a requester-pays bucket through one boto3 client."""

    def __init__(self, client=None, region: str = "us-east-1"):
        self._client = client
        self._region = region

    @property
    def client(self):
        if self._client is None:  # created lazily: the reader is pickled to Beam workers
            import boto3

            self._client = boto3.client("s3", region_name=self._region)
        return self._client

    def __getstate__(self):
        return {"_client": None, "_region": self._region}

    def open_stream(self, url: str) -> BinaryIO:
        """The object's body as a file-like stream (read sequentially, never held whole)."""
        bucket, key = split_s3_url(url)
        response = self.client.get_object(Bucket=bucket, Key=key, RequestPayer="requester")
        return response["Body"]

    def read_range(self, url: str, offset: int, size: int) -> bytes:
        """`size` bytes from `offset` with one ranged GET."""
        if size <= 0:
            return b""
        bucket, key = split_s3_url(url)
        response = self.client.get_object(Bucket=bucket, Key=key, RequestPayer="requester",
                                          Range=f"bytes={offset}-{offset + size - 1}")
        return response["Body"].read()

    def match(self, pattern: str) -> list[str]:
        """URLs of the objects matching a glob (the prefix before the first wildcard is listed)."""
        bucket, key_pattern = split_s3_url(pattern)
        prefix = key_pattern
        for i, ch in enumerate(key_pattern):
            if ch in "*?[":
                prefix = key_pattern[:i]
                break
        return sorted(f"s3://{bucket}/{key}" for key in self._keys(bucket, prefix)
                      if fnmatch.fnmatchcase(key, key_pattern))

    def _keys(self, bucket: str, prefix: str) -> Iterator[str]:
        token: Optional[str] = None
        while True:
            kwargs = {"Bucket": bucket, "Prefix": prefix, "RequestPayer": "requester"}
            if token:
                kwargs["ContinuationToken"] = token
            page = self.client.list_objects_v2(**kwargs)
            for item in page.get("Contents", []):
                yield item["Key"]
            if not page.get("IsTruncated"):
                return
            token = page["NextContinuationToken"]
