"""Staging rows and committing them as a generation, without a pipeline (shared by the storage tests
and by the subprocess the commit-kill test runs)."""
import collections

from transforms.write import commit as staging
from transforms.write import files
from transforms.write import manifest as manifests
from transforms.write.parquet import parquet_bytes, relative_file_path


def stage(output: str, rows_by_table: dict) -> None:
    """Write rows into the staging directory as the pipeline would (same names, same bytes)."""
    for table, rows in rows_by_table.items():
        by_file = collections.defaultdict(list)
        for row in rows:
            by_file[relative_file_path(table, row, 1)].append(row)
        for relative, part in by_file.items():
            files.write_bytes(files.join(staging.staging_dir(output), relative), parquet_bytes(table, part))


def commit(output: str, groups) -> dict:
    """Commit the staged files of `groups` as a new generation; returns the commit stats."""
    previous = manifests.read_manifest(output)
    plan = staging.plan_commit(output, groups, manifests.committed_relative(output, previous))
    manifest = manifests.build_manifest(plan=plan, locate=staging.plan_locator(output, plan), inputs=[],
                                        accounting={}, options={}, durations={}, describer=None, embedding=None,
                                        resume={}, previous=previous)
    manifests.commit_generation(output, plan, manifest)
    return plan["stats"]
