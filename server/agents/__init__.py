"""Agent backends for the four LLM stages: offline (default, rule-based) and llm (OpenAI-compatible)."""
