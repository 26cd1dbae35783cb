"""The results layer, below the runner and the reports: what a run leaves on disk
(``records``, ``statuses``), the folder that holds it (``store``), older formats read as
today's (``legacy``), the prices that cost it (``prices``) and the DataFrame every table
reads (``frames``, and ``columns`` reading runs.jsonl straight into it), and the runs as
OpenTelemetry spans (``otlp``, ``otlp_spans``: the ``otlp`` extra's). Imports nothing,
so importing one module does not import the others through this package."""
