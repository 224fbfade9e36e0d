"""The MCP server (``memcite mcp``): memcite's own JSON-RPC loop on stdio (``server``), the tools
it serves, each a call of a library function returning its model (``tools``), and the tool list
shipped as ``tools.json`` (``catalog``).

Below the command line, which only builds the run's ``memcite.paths.Locations`` and starts it;
above every other wing. It never imports ``memcite.cli`` and reads no command's printed output.
"""
