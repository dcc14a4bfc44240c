"""Interop peer: the official Python SDK 1.x client (PyPI `mcp`, protocol 2025-11-25) against a
server, over Streamable HTTP (sessions) or stdio. It initializes, calls echo, completes
provision_database by answering the pushed elicitation/create with REGION, checks that
arguments of the wrong type come back as a tool error (isError, SEP-1303), gets a prompt and
reads a resource when the server has them, and prints one JSON line.
Usage: client.py http URL NAME REGION | client.py stdio NAME REGION -- COMMAND...
"""

import asyncio
import json
import sys
from contextlib import AsyncExitStack

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client
from mcp.shared.exceptions import McpError


async def run(transport, name: str, region: str) -> dict:
    out = {"ok": False}
    pushes = []

    async def elicit(ctx, params):
        pushes.append(params.message)
        props = list((params.requestedSchema or {}).get("properties", {}))
        return types.ElicitResult(action="accept", content={props[0]: region})

    async with AsyncExitStack() as stack:
        streams = await stack.enter_async_context(transport)
        read, write = streams[0], streams[1]
        session = await stack.enter_async_context(ClientSession(read, write, elicitation_callback=elicit))
        init = await session.initialize()
        out["protocolVersion"] = init.protocolVersion
        out["server"] = init.serverInfo.name
        tools = {t.name for t in (await session.list_tools()).tools}
        echo = await session.call_tool("echo", {"text": "hello from the Python SDK 1.x"})
        out["echo"] = echo.content[0].text
        done = await session.call_tool("provision_database", {"name": name})
        if done.isError:
            out["error"] = "provision_database returned isError: " + done.content[0].text
            return out
        out["text"] = done.content[0].text
        out["pushes"] = len(pushes)
        try:
            bad = await session.call_tool("echo", {"text": 5})
            out["wrongArgs"] = "isError" if bad.isError else "accepted"
        except McpError as e:
            out["wrongArgs"] = f"protocol error {e.error.code}"
        if init.capabilities.prompts:
            prompts = (await session.list_prompts()).prompts
            if prompts:
                required = {a.name: "Ada" for a in prompts[0].arguments or [] if a.required}
                out["prompt"] = len((await session.get_prompt(prompts[0].name, required)).messages)
        if init.capabilities.resources:
            listed = (await session.list_resources()).resources
            if listed:
                read_back = await session.read_resource(listed[0].uri)
                out["resource"] = len(read_back.contents)
        await session.send_ping()
        out["ok"] = "provision_database" in tools
    return out


def main() -> None:
    if sys.argv[1] == "http":
        url, name, region = sys.argv[2:5]
        transport = streamablehttp_client(url)
    else:
        name, region = sys.argv[2:4]
        command = sys.argv[sys.argv.index("--") + 1 :]
        transport = stdio_client(StdioServerParameters(command=command[0], args=command[1:]))
    try:
        out = asyncio.run(asyncio.wait_for(run(transport, name, region), 60))
    except Exception as e:  # reported, not raised: the script's caller reads one JSON line
        while isinstance(e, BaseExceptionGroup) and len(e.exceptions) == 1:
            e = e.exceptions[0]
        out = {"ok": False, "error": f"{type(e).__name__}: {e}"}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
