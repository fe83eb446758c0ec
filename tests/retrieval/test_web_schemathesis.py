"""The OpenAPI document matches the responses: schemathesis (its own CLI, real HTTP) finds no failure.

Every check runs: server errors, undocumented status codes and content types, responses that do
not match their schema, schema-invalid requests accepted, schema-valid requests rejected, and
methods the document does not list (405 with Allow). The seed fixes the generated cases; the
500-case acceptance run is `st run URL/openapi.json -n 500` against `thmforge serve`.
"""
import shutil
import subprocess
import sys
import pathlib

CASES_PER_OPERATION = 30


def test_schemathesis_finds_no_failure(web_server, tmp_path):
    st = shutil.which("st") or str(pathlib.Path(sys.executable).with_name("st"))
    result = subprocess.run(
        [st, "run", f"{web_server}/openapi.json", "--max-examples", str(CASES_PER_OPERATION), "--seed", "17",
         "--workers", "1", "--request-timeout", "120", "--no-color"],
        capture_output=True, text=True, timeout=900, cwd=tmp_path)
    summary = result.stdout[-4000:]
    assert result.returncode == 0, summary
    assert "No issues found" in summary or " passed" in summary, summary
