"""The embedded deployment (``tracker up``): a SQLite journal and the processor, in one process."""
