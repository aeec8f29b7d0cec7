from edge.cli.main import entry

entry()
