"""The ``groupcheck`` command.

A command imports the groupcheck modules it runs inside its own function,
not at the top of its module: the commands share one process, and
importing every stage's code (the audit, the pipeline, the JGroups adapter,
the cluster runner, the models) would cost each command, ``--help``
included, about three times the imports it needs (measured with
``python -X importtime`` under load: 1.9 s for cli/main.py alone, 5.7 s
with every command's modules).  The standard library and the CLI's own
libraries (typer, rich) are imported at the top.
"""
