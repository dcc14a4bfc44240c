"""Bench peer: Python SDK v1 (`mcp==1.30.0`), FastMCP over sessionful Streamable HTTP (2025-11-25),
served by uvicorn.

Tools:
  echo(text)               -> text
  provision_database(name) -> `ctx.elicit` pushes elicitation/create {region} on the call's own SSE
                              stream, waits for the answer the client POSTs, then returns
                              "Created <name> in <region>".
Sessions (Mcp-Session-Id) are the SDK default (`stateless_http=False`), answers are SSE streams
(`json_response=False`); DELETE ends a session.
"""

from pydantic import BaseModel, Field

from mcp.server.fastmcp import Context, FastMCP

mcp = FastMCP("peer-py-sdk-v1", log_level="WARNING")


class Region(BaseModel):
    # mcp 1.x accepts only primitive annotations in elicitation schemas (no Literal): a string
    # whose JSON schema lists the choices.
    region: str = Field(title="Region", json_schema_extra={"enum": ["eu-west-1", "us-east-1"]})


@mcp.tool()
async def echo(text: str) -> str:
    """Echo the text argument."""
    return text


@mcp.tool()
async def provision_database(name: str, ctx: Context) -> str:
    """Create a database; asks for the region."""
    answer = await ctx.elicit(f"Which region for {name}?", schema=Region)
    if answer.action != "accept":
        raise ValueError(f"not provisioned ({answer.action})")
    return f"Created {name} in {answer.data.region}"


app = mcp.streamable_http_app()
