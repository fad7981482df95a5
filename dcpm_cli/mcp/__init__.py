"""`dcpm mcp`: the Model Context Protocol front end."""
