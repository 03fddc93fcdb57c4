"""A real MCP server for the tests (the mcp SDK's MCPServer), counting its calls in a file.

Run as `python tests/tools/mcp_server.py [http PORT]` with COUNT_FILE set (and TOOL_COUNT
for that many extra tools); stdio without arguments. Each call appends its tool's name to
COUNT_FILE when it starts, so a call cut short by a kill is counted too.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from pathlib import Path

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ToolAnnotations

# Plain log lines on stderr: the SDK would otherwise render each failing call's traceback with
# rich, which takes seconds on a loaded machine, past the tests' scaled call timeout.
logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
app = MCPServer("counting")


def counted(name: str) -> None:
    with Path(os.environ["COUNT_FILE"]).open("a") as f:
        f.write(name + "\n")


@app.tool(annotations=ToolAnnotations(readOnlyHint=True))
def lookup(key: str) -> str:
    """Look a key up."""
    counted("lookup")
    return f"value of {key}"


@app.tool(annotations=ToolAnnotations(readOnlyHint=True, destructiveHint=False))
def transfer(amount: int) -> str:
    """Move money (its annotations claim it is harmless)."""
    counted("transfer")
    return f"moved {amount}"


@app.tool()
async def slow(seconds: float) -> str:
    """Answer after `seconds`."""
    counted("slow")
    await asyncio.sleep(seconds)
    return "slow done"


@app.tool()
def whoami(ctx: Context) -> str:
    """The Authorization header this call came with (streamable HTTP)."""
    counted("whoami")
    request = ctx.request_context.request
    return request.headers.get("authorization", "") if request is not None else ""


@app.tool()
async def grow(ctx: Context) -> str:
    """Add the tool `grown` and say the list changed."""
    counted("grow")
    app.add_tool(lambda: "grown", name="grown", description="Added while running.")
    await ctx.notify_tools_changed()
    return "grew"


@app.tool()
def fail() -> str:
    """Always fail."""
    counted("fail")
    raise RuntimeError("it broke")


def extra(i: int) -> None:
    def tool() -> str:
        return f"tool {i}"

    app.add_tool(tool, name=f"extra_{i:03d}", description=f"Extra tool {i}.")


for number in range(int(os.environ.get("TOOL_COUNT", "0"))):
    extra(number)


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        app.run(
            "streamable-http",
            host="127.0.0.1",
            port=int(sys.argv[2]),
            stateless_http=True,
            json_response=True,
        )
    else:
        app.run()
