"""An in-process object store registered with Beam for `mem://`: like GCS or S3 it has no
directories and a written object appears whole when its upload closes. Tests write job outputs
there to prove that a job's storage goes through Beam's FileSystems only.

Beam finds filesystems by subclass, so importing this module registers the scheme; the
FnApiRunner in `in_memory` mode runs its workers in this process, so they share the objects.
"""
import io

from apache_beam.io.filesystem import FileMetadata, FileSystem


class MemoryFileSystem(FileSystem):
    """Objects in a class-level dict: Beam makes a new instance for every call."""

    objects: dict[str, bytes] = {}

    @classmethod
    def scheme(cls):
        return "mem"

    def join(self, basepath, *paths):
        return "/".join([basepath.rstrip("/"), *(p.strip("/") for p in paths)])

    def split(self, path):
        head, _, tail = path.rpartition("/")
        return head, tail

    def mkdirs(self, path):
        pass

    def has_dirs(self):
        return False

    def _list(self, dir_or_prefix):
        for path in sorted(self.objects):
            if path.startswith(dir_or_prefix):
                yield self.metadata(path)

    def create(self, path, mime_type=None, compression_type=None):
        objects = self.objects

        class Upload(io.BytesIO):
            def close(self):
                if not self.closed:
                    objects[path] = self.getvalue()
                super().close()

        return Upload()

    def open(self, path, mime_type=None, compression_type=None):
        return io.BytesIO(self.objects[path])

    def copy(self, source_file_names, destination_file_names):
        for source, destination in zip(source_file_names, destination_file_names):
            self.objects[destination] = self.objects[source]

    def rename(self, source_file_names, destination_file_names):
        for source, destination in zip(source_file_names, destination_file_names):
            self.objects[destination] = self.objects.pop(source)

    def exists(self, path):
        return path in self.objects

    def size(self, path):
        return len(self.objects[path])

    def last_updated(self, path):
        return 0.0

    def metadata(self, path):
        return FileMetadata(path, self.size(path), 0.0)

    def delete(self, paths):
        for path in paths:
            del self.objects[path]
