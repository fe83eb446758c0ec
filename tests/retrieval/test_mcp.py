"""The MCP server, through the SDK's own client: over stdio (`thmforge mcp DIR` as a subprocess)
and over streamable HTTP (`/mcp` of the web application under uvicorn on loopback)."""
import os
import shutil
import sys

import anyio
from mcp import Client, StdioServerParameters

TOOLS = {"theorem_search", "get_statement", "get_paper", "statement_neighbors"}
CALL_TIMEOUT_S = 300      # the first call may wait for the model on a loaded machine


async def exercise(client: Client) -> None:
    """List the tools and call each one, including with bad arguments, as an agent would."""
    listed = await client.list_tools()
    assert {tool.name for tool in listed.tools} == TOOLS
    search_schema = next(t for t in listed.tools if t.name == "theorem_search").input_schema
    assert {"query", "n_results", "mode", "kinds", "sources", "categories", "year_from", "year_to", "authors",
            "paper_ids"} == set(search_schema["properties"])

    found = await client.call_tool("theorem_search", {"query": "a closed subset of a compact space is compact",
                                                      "n_results": 3, "kinds": ["lemma"], "authors": ["hausdorff"]},
                                   read_timeout_seconds=CALL_TIMEOUT_S)
    assert not found.is_error, found.content
    top = found.structured_content["results"][0]
    assert top["name"] == "Lemma 2.2" and top["label"] == "lem:closed-compact"
    assert {r["kind"] for r in found.structured_content["results"]} == {"lemma"}

    statement = await client.call_tool("get_statement", {"theorem_id": top["theorem_id"]})
    assert not statement.is_error and statement.structured_content["paper"]["authors"] == ["Felix Hausdorff"]
    assert "Lemma 2.2" in statement.structured_content["citation"]

    paper = await client.call_tool("get_paper", {"paper_id": top["paper_id"]})
    assert not paper.is_error and paper.structured_content["title"] == "Notes on point-set topology"
    assert top["theorem_id"] in {s["theorem_id"] for s in paper.structured_content["statements"]}

    neighbours = await client.call_tool("statement_neighbors", {"theorem_id": top["theorem_id"]})
    assert not neighbours.is_error
    assert neighbours.structured_content == {"uses": [], "used_by": [], "restatements": []}   # no edges table

    for name, arguments, message in [
        ("theorem_search", {"query": "x", "n_results": 1000}, "n_results"),
        ("theorem_search", {"query": "x", "kinds": ["lemma' OR 1=1"]}, "kinds"),
        ("get_statement", {"theorem_id": "arxiv:0000.00000#1"}, "no statement"),
        ("get_paper", {"paper_id": "nope"}, "no paper"),
    ]:
        result = await client.call_tool(name, arguments)
        assert result.is_error and message in result.content[0].text, (name, result.content)


def test_mcp_over_stdio(corpus_dir):
    thmforge = shutil.which("thmforge")
    command, args = (thmforge, []) if thmforge else (sys.executable, ["-c", "import sys; from runners.cli import main; sys.exit(main())"])
    params = StdioServerParameters(command=command, args=args + ["mcp", str(corpus_dir)], env=dict(os.environ))

    async def run():
        async with Client(params, read_timeout_seconds=CALL_TIMEOUT_S) as client:
            await exercise(client)

    anyio.run(run)


def test_mcp_over_streamable_http(web_server):
    async def run():
        async with Client(f"{web_server}/mcp", read_timeout_seconds=CALL_TIMEOUT_S) as client:
            await exercise(client)

    anyio.run(run)
