"""The MCP tools over one corpus, for agents: the same service as the web app's JSON API.

`theorem_search` takes exactly the fields of `POST /search` (validated by the same request
model); `get_statement`, `get_paper` and `statement_neighbors` answer what `GET /statements/{id}`
and `GET /papers/{id}` do. Served over stdio (`thmforge mcp DIR`) and streamable HTTP (`/mcp` of
`thmforge serve`).
"""
from __future__ import annotations

from typing import Annotated, Literal, Optional

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field, ValidationError

from retrieval.search import MODES
from retrieval.service import (MAX_RESULTS, Category, FilterValue, Kind, Neighbour, NotFound, Paper, PaperId,
                               SearchRequest, SearchResponse, SearchService, Source, Statement, Year)
from schemas.errors import UsageError

INSTRUCTIONS = ("Search theorem-like statements (theorems, lemmas, definitions, ...) of a mathematical corpus "
                "by meaning, then read a statement, its paper and the statements it uses or that use it.")


class Neighbours(BaseModel):
    uses: list[Neighbour]
    used_by: list[Neighbour]
    restatements: list[Neighbour]


def _answer(call, *args):
    """The service's answer; a bad request or an unknown id becomes the tool's error message."""
    try:
        return call(*args)
    except (UsageError, NotFound) as exc:
        raise ToolError(str(exc)) from None


def build_mcp_server(service: SearchService) -> MCPServer:
    server = MCPServer(name="thmforge", instructions=INSTRUCTIONS, log_level="WARNING")

    @server.tool()
    def theorem_search(
        query: Annotated[str, Field(description="what to find, in words")],
        n_results: Annotated[int, Field(ge=1, le=MAX_RESULTS)] = 10,
        mode: Literal[MODES] = "vector",   # type: ignore[valid-type]
        kinds: Optional[list[Kind]] = None,
        sources: Optional[list[Source]] = None,
        categories: Optional[list[Category]] = None,
        year_from: Optional[Year] = None,
        year_to: Optional[Year] = None,
        authors: Optional[list[FilterValue]] = None,
        paper_ids: Optional[list[PaperId]] = None,
    ) -> SearchResponse:
        """Theorem-like statements ranked by how well they match the query (the fields of POST /search)."""
        arguments = dict(query=query, n_results=n_results, mode=mode, kinds=kinds, sources=sources,
                         categories=categories, year_from=year_from, year_to=year_to, authors=authors,
                         paper_ids=paper_ids)
        try:
            request = SearchRequest(**arguments)
        except ValidationError as exc:
            raise ToolError("; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())) from None
        return SearchResponse.model_validate(_answer(service.search, request))

    @server.tool()
    def get_statement(theorem_id: Annotated[str, Field(description="a theorem_id from theorem_search")]) -> Statement:
        """A statement with its LaTeX, proof, paper, uses, used-by, restatements and a citation."""
        return Statement.model_validate(_answer(service.statement, theorem_id))

    @server.tool()
    def get_paper(paper_id: Annotated[str, Field(description="a paper_id such as arxiv:2101.00001")]) -> Paper:
        """A paper's metadata with its statements in document order and its graph edges."""
        return Paper.model_validate(_answer(service.paper, paper_id))

    @server.tool()
    def statement_neighbors(theorem_id: str) -> Neighbours:
        """The statements this one uses (dependencies), those that use it (dependents), and its
        restatements in other papers (empty until the corpus has a theorem graph)."""
        return Neighbours.model_validate(_answer(service.neighbours, theorem_id))

    return server
