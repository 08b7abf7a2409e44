"""All pairs shortest paths (``./apsp``): Floyd-Warshall, blocked Floyd-Warshall, min-plus squaring, SSSP from every source."""
