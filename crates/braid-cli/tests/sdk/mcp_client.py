"""Drives `braid serve` (Streamable HTTP) or `braid mcp` (stdio) with the official MCP Python SDK.

Usage:
  mcp_client.py --mode MODE --http URL --token TOKEN --query Q
  mcp_client.py --mode MODE --stdio BRAID_BINARY [ARGS...] --query Q

MODE is the SDK's connect mode: `auto` (probe server/discover, fall back to initialize),
`legacy` (initialize handshake) or a pinned modern revision such as `2026-07-28`.
Prints one JSON object: the negotiated revision, the tool names, and the search result.
Run by crates/braid-cli/tests/mcp_sdk.rs; exits non-zero on any SDK error.
"""

import argparse
import asyncio
import json
import sys

import httpx2
import mcp
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client


async def run(args: argparse.Namespace) -> dict:
    if args.http:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {args.token}"}, timeout=60)
        server = streamable_http_client(args.http, http_client=http)
    else:
        http = None
        server = StdioServerParameters(command=args.stdio[0], args=args.stdio[1:])
    try:
        async with Client(server, mode=args.mode) as client:
            tools = await client.list_tools()
            result = await client.call_tool("search", {"query": args.query, "k": 3})
            text = "".join(c.text for c in result.content if getattr(c, "type", "") == "text")
            return {
                "sdk": mcp.__name__ + " " + __import__("importlib.metadata").metadata.version("mcp"),
                "mode": args.mode,
                "protocol_version": client.protocol_version,
                "tools": [t.name for t in tools.tools],
                "is_error": bool(result.is_error),
                "text": text,
                "structured": result.structured_content,
            }
    finally:
        if http is not None:
            await http.aclose()


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--mode", required=True)
    p.add_argument("--http")
    p.add_argument("--token")
    p.add_argument("--query", required=True)
    p.add_argument("--stdio", nargs=argparse.REMAINDER)
    args = p.parse_args()
    if bool(args.http) == bool(args.stdio):
        sys.exit("give --http URL --token T, or --stdio COMMAND...")
    print(json.dumps(asyncio.run(run(args))))


if __name__ == "__main__":
    main()
