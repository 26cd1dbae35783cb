"""Model clients: the protocol and messages (``types``), the OpenAI-compatible HTTP client
(``openai_compat``), counting (``counting``) and fakes (``scripted``). Imports nothing, so
importing one module does not import the HTTP client through this package."""
