"""A server built on the official Python SDK 1.x (PyPI `mcp`, protocol 2025-11-25, FastMCP,
sessionful Streamable HTTP as the SDK's default): the interop peer of `scripts/interop-py`, and
the `py-sdk-v1` peer of `scripts/bench` (served by uvicorn as `server:app`).

Tools:
  echo(text)               -> text
  provision_database(name) -> pushes elicitation/create {region} (`ctx.elicit`), waits for the
                              client's answer, returns "Created <name> in <region>".
Usage: server.py stdio | server.py http PORT   (http prints its URL once it listens)
       uvicorn server:app --port PORT
"""

import asyncio
import sys

import uvicorn
from pydantic import BaseModel, Field

from mcp.server.fastmcp import Context, FastMCP

mcp = FastMCP("peer-py-sdk-v1", log_level="WARNING")


class Region(BaseModel):
    # mcp 1.x forms take primitive annotations only: a string whose schema lists the choices.
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


async def serve_http(port: int) -> None:
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    for _ in range(300):
        if server.started:
            print(f"listening on http://127.0.0.1:{port}/mcp", flush=True)
            break
        await asyncio.sleep(0.1)
    await task


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        asyncio.run(serve_http(int(sys.argv[2])))
    else:
        mcp.run("stdio")
