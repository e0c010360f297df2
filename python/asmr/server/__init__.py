"""The HTTP face: ``asmr serve`` (FastAPI on uvicorn).

``app`` builds the app (``create_app``; ``app_from_env`` for ``--workers N``), ``routes`` holds
search / answer / verify / units / ingest / health / metrics, ``openai_compat`` the
OpenAI-compatible chat, ``state`` the snapshot swap and conversations, ``context`` the shared
settings and the auth dependencies, ``auth`` the API keys, ``limits`` the body-size middleware
and rate limiter, ``metrics`` Prometheus, ``schemas`` the request and response bodies,
``errors`` the one JSON error shape. The command line is ``asmr.cli.serve``.
"""
