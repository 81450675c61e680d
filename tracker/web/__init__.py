"""The pages the gateway serves: plain HTML, CSS and JavaScript, no build step.

``index.html`` (``/``), ``overlay.html`` (``/overlay/{id}``),
``spectator.html`` (``/t/{id}``) and ``arbiter.html`` (``/arbiter/{id}``)
load their scripts and styles from ``/static/NAME``.  Every page talks
websocket protocol v1 (:mod:`tracker.protocol`) through ``live.js``, which
resubscribes with ``since`` after a drop and never shows a gap.  Anything
that comes from events (names, reasons, summaries) is inserted as text,
never as HTML.
"""
