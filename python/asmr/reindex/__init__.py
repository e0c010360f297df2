"""Batch re-indexing of large corpora, in this process or on a Ray cluster (``asmr reindex``).

``tasks`` splits the inputs into units of work and turns one into the texts to embed,
``local`` and ``ray_backend`` embed them, ``shards`` keeps the vectors between the stages
(resumable), ``precomputed`` serves them to ``Writer.ingest`` at commit, ``run`` runs the
stages. The command is ``asmr.cli.reindex``.
"""
