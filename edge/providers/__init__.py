"""LLM providers behind the Provider protocol; channels and providers never import each other."""
