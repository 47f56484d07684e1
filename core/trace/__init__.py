"""The trace and history formats, in one place: the writer (writer.py), the
JSON Schemas (schemas/, trace_schema.json), which layer a record is
(layers.py), the reader (reader.py) with its input limits (limits.py), the
compiled validator (validate.py), the typed decoders (decode.py) and the
history reader (history.py).  docs/trace-format.md, docs/history-format.md."""
