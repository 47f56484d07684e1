"""The Parquet pipeline: generate / ingest -> Parquet -> check -> coverage, on the
local engine or on Spark (stages.py, spark.py, spark_submit.py); docs/pipeline.md."""
